// historycheck: checks a site's format-v2 history with the Go reference packages
// golang.org/x/mod/sumdb/note and golang.org/x/mod/sumdb/tlog (Debian's golang-golang-x-mod-dev),
// independently of the project's own code:
//
//	historycheck SITE VKEY [VKEY...]
//
// The tiles (C2SP tlog-tiles, whose paths lack the height element of Go's tile paths) are read
// through tlog.TileHashReader, which authenticates every tile against the checkpoint's tree; the
// tree hash they give must be the checkpoint's root and every entry bundle's leaves must hash to
// the level-0 tiles. Every archived checkpoint is opened with note.Open (the VKEYs are all the
// keys the program ever had: an old checkpoint is signed by the key of its time) and every
// consistency proof is checked with tlog.CheckTree and recomputed with tlog.ProveTree. It says how many
// signature lines note.Open ignored as by keys it was not given (a checkpoint's ML-DSA-44 line, type
// 0x06, which this Go package cannot check: a reader of the Ed25519 key alone must still open it).
package main

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func fail(format string, a ...any) {
	fmt.Printf("FAIL: "+format+"\n", a...)
	os.Exit(1)
}

type siteTiles struct{ dir string }

func (s siteTiles) Height() int { return 8 }

func (s siteTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		rel := "tile/" + strings.TrimPrefix(t.Path(), "tile/8/")
		data, err := os.ReadFile(filepath.Join(s.dir, "ledger", rel))
		if err != nil {
			return nil, err
		}
		out[i] = data
	}
	return out, nil
}

func (s siteTiles) SaveTiles([]tlog.Tile, [][]byte) {}

func openCheckpoint(path string, vs note.Verifiers, origin string) (int64, tlog.Hash, int) {
	data, err := os.ReadFile(path)
	if err != nil {
		fail("%s: %v", path, err)
	}
	n, err := note.Open(data, vs)
	if err != nil {
		fail("%s: note.Open: %v", path, err)
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) < 4 || lines[0] != origin {
		fail("%s: not a checkpoint of %s", path, origin)
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil {
		fail("%s: size: %v", path, err)
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		fail("%s: root: %v", path, err)
	}
	return size, root, len(n.UnverifiedSigs)
}

func hexHash(s string) tlog.Hash {
	var h tlog.Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != tlog.HashSize {
		fail("malformed hash %q", s)
	}
	copy(h[:], b)
	return h
}

func main() {
	if len(os.Args) < 3 {
		fail("usage: historycheck SITE VKEY [VKEY...]")
	}
	site := os.Args[1]
	var list []note.Verifier
	for _, vkey := range os.Args[2:] {
		v, err := note.NewVerifier(vkey)
		if err != nil {
			fail("vkey rejected by note.NewVerifier: %v", err)
		}
		list = append(list, v)
	}
	vs := note.VerifierList(list...)
	origin := list[0].Name()
	size, root, ignored := openCheckpoint(filepath.Join(site, "ledger", "checkpoint"), vs, origin)
	fmt.Printf("ok: note.Open verified the checkpoint (size %d), ignoring %d signature lines by other keys\n", size, ignored)

	tree := tlog.Tree{N: size, Hash: root}
	hr := tlog.TileHashReader(tree, siteTiles{site})
	th, err := tlog.TreeHash(size, hr)
	if err != nil || th != root {
		fail("tlog.TreeHash over the tiles: %v (%v)", th, err)
	}
	for start := int64(0); start < size; start += 256 {
		width := size - start
		if width > 256 {
			width = 256
		}
		rel := "tile/entries/" + strings.TrimPrefix(tlog.Tile{H: 8, L: 0, N: start / 256, W: int(width)}.Path(), "tile/8/0/")
		data, err := os.ReadFile(filepath.Join(site, "ledger", rel))
		if err != nil {
			fail("%s: %v", rel, err)
		}
		for i := int64(0); i < width; i++ {
			if len(data) < 2 {
				fail("%s: truncated", rel)
			}
			n := int(binary.BigEndian.Uint16(data))
			if len(data) < 2+n {
				fail("%s: truncated", rel)
			}
			leaf := data[2 : 2+n]
			data = data[2+n:]
			want, err := hr.ReadHashes([]int64{tlog.StoredHashIndex(0, start+i)})
			if err != nil || want[0] != tlog.RecordHash(leaf) {
				fail("%s: leaf %d does not hash to the tiles' hash (%v)", rel, start+i, err)
			}
		}
		if len(data) != 0 {
			fail("%s: %d bytes after its entries", rel, len(data))
		}
	}
	fmt.Printf("ok: tlog.TileHashReader authenticated the tiles; their %d entries and tree hash match the checkpoint\n", size)

	raw, err := os.ReadFile(filepath.Join(site, "ledger", "history.json"))
	if err != nil {
		fail("ledger/history.json: %v", err)
	}
	var history struct {
		Checkpoints []struct {
			TreeSize    int64   `json:"tree_size"`
			Root        string  `json:"root"`
			Checkpoint  string  `json:"checkpoint"`
			Consistency *string `json:"consistency"`
		} `json:"checkpoints"`
	}
	if err := json.Unmarshal(raw, &history); err != nil {
		fail("ledger/history.json: %v", err)
	}
	archivedIgnored := 0
	for _, row := range history.Checkpoints {
		m, oldRoot, ignored := openCheckpoint(filepath.Join(site, row.Checkpoint), vs, origin)
		archivedIgnored += ignored
		if m != row.TreeSize || oldRoot != hexHash(row.Root) {
			fail("%s: size or root differs from ledger/history.json", row.Checkpoint)
		}
		if row.Consistency == nil {
			continue
		}
		var doc struct {
			OldSize int64    `json:"old_size"`
			NewSize int64    `json:"new_size"`
			Hashes  []string `json:"hashes"`
		}
		data, err := os.ReadFile(filepath.Join(site, *row.Consistency))
		if err != nil || json.Unmarshal(data, &doc) != nil || doc.OldSize != m || doc.NewSize != size {
			fail("%s: unreadable or about other sizes (%v)", *row.Consistency, err)
		}
		var proof tlog.TreeProof
		for _, h := range doc.Hashes {
			proof = append(proof, hexHash(h))
		}
		if err := tlog.CheckTree(proof, size, root, m, oldRoot); err != nil {
			fail("%s: tlog.CheckTree: %v", *row.Consistency, err)
		}
		mine, err := tlog.ProveTree(size, m, hr)
		if err != nil || len(mine) != len(proof) {
			fail("%s: tlog.ProveTree gives another proof (%v)", *row.Consistency, err)
		}
		for i := range mine {
			if mine[i] != proof[i] {
				fail("%s: hash %d differs from tlog.ProveTree's", *row.Consistency, i)
			}
		}
	}
	fmt.Printf("ok: note.Open opened %d archived checkpoints (ignoring %d signature lines by other keys); tlog.CheckTree accepted, and tlog.ProveTree reproduced, their consistency proofs\n", len(history.Checkpoints), archivedIgnored)
}
