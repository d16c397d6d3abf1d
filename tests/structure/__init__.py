"""The shape of the code: the layer map, the bundled verify.py, no test module importing another, and the
package's data files."""
