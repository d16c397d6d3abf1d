"""Hashing to BLS12-381's group G1 (RFC 9380, suite BLS12381G1_XMD:SHA-256_SSWU_RO_), and the G1
arithmetic it needs: the message half of a drand quicknet signature check.

The suite (RFC 9380 section 8.8.1): expand_message_xmd with SHA-256 (section 5.3.1),
hash_to_field with m = 1 and L = 64 (section 5.2), the simplified SWU map onto the curve E1'
isogenous to E1 (section 6.6.3), the 11-isogeny from E1' to E1 (Appendix E.2), and cofactor
clearing by multiplication with h_eff = 0xd201000000010001 (section 7).

Points of E1: y^2 = x^3 + 4 over the prime field of BLS12_381_P are affine pairs of ints, and None
is the point at infinity. g1_add is affine, one modular inversion per addition (CPython's
pow(a, -1, p) is quick); g1_mul, which runs the cofactor clearing here and the subgroup check of
bls12_381, works in Jacobian coordinates and inverts once at the end. Verification only, on
public values: nothing is constant-time.
"""

import hashlib

# The base field's prime (RFC 9380 section 8.8.1; the BLS12-381 parameters of
# draft-irtf-cfrg-pairing-friendly-curves, section 4.2.1).
BLS12_381_P = 0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB

G1Point = tuple[int, int] | None

# E1': y^2 = x^3 + A'x + B', and the SWU constant Z, from RFC 9380 section 8.8.1.
_H2C_A = 0x144698A3B8E9433D693A02C96D4982B0EA985383EE66A8D8E8981AEFD881AC98936F8DA0E0F97F5CF428082D584C1D
_H2C_B = 0x12E2908D11688030018B12E8753EEE3B2016C1F0F24F4070A0B9C14FCEF35EF55A23215A316CEAA5D1CC48E98E172BE0
_H2C_Z = 11
_H2C_H_EFF = 0xD201000000010001
_H2C_L = 64  # bytes per field element: ceil((381 + 128) / 8)
_H2C_SQRT_EXPONENT = (BLS12_381_P + 1) // 4  # p = 3 mod 4: a square root is a^((p+1)/4)

# The 11-isogeny map from E1' to E1 (RFC 9380 Appendix E.2): the coefficients k_(1,i) of x_num,
# k_(2,i) of x_den, k_(3,i) of y_num and k_(4,i) of y_den, lowest degree first. x_den and y_den are
# monic: their leading coefficients (of x'^10 and x'^15) are 1 and are not listed.
_H2C_ISO_X_NUM = (
    0x11A05F2B1E833340B809101DD99815856B303E88A2D7005FF2627B56CDB4E2C85610C2D5F2E62D6EAEAC1662734649B7,
    0x17294ED3E943AB2F0588BAB22147A81C7C17E75B2F6A8417F565E33C70D1E86B4838F2A6F318C356E834EEF1B3CB83BB,
    0xD54005DB97678EC1D1048C5D10A9A1BCE032473295983E56878E501EC68E25C958C3E3D2A09729FE0179F9DAC9EDCB0,
    0x1778E7166FCC6DB74E0609D307E55412D7F5E4656A8DBF25F1B33289F1B330835336E25CE3107193C5B388641D9B6861,
    0xE99726A3199F4436642B4B3E4118E5499DB995A1257FB3F086EEB65982FAC18985A286F301E77C451154CE9AC8895D9,
    0x1630C3250D7313FF01D1201BF7A74AB5DB3CB17DD952799B9ED3AB9097E68F90A0870D2DCAE73D19CD13C1C66F652983,
    0xD6ED6553FE44D296A3726C38AE652BFB11586264F0F8CE19008E218F9C86B2A8DA25128C1052ECADDD7F225A139ED84,
    0x17B81E7701ABDBE2E8743884D1117E53356DE5AB275B4DB1A682C62EF0F2753339B7C8F8C8F475AF9CCB5618E3F0C88E,
    0x80D3CF1F9A78FC47B90B33563BE990DC43B756CE79F5574A2C596C928C5D1DE4FA295F296B74E956D71986A8497E317,
    0x169B1F8E1BCFA7C42E0C37515D138F22DD2ECB803A0C5C99676314BAF4BB1B7FA3190B2EDC0327797F241067BE390C9E,
    0x10321DA079CE07E272D8EC09D2565B0DFA7DCCDDE6787F96D50AF36003B14866F69B771F8C285DECCA67DF3F1605FB7B,
    0x6E08C248E260E70BD1E962381EDEE3D31D79D7E22C837BC23C0BF1BC24C6B68C24B1B80B64D391FA9C8BA2E8BA2D229,
)
_H2C_ISO_X_DEN = (
    0x8CA8D548CFF19AE18B2E62F4BD3FA6F01D5EF4BA35B48BA9C9588617FC8AC62B558D681BE343DF8993CF9FA40D21B1C,
    0x12561A5DEB559C4348B4711298E536367041E8CA0CF0800C0126C2588C48BF5713DAA8846CB026E9E5C8276EC82B3BFF,
    0xB2962FE57A3225E8137E629BFF2991F6F89416F5A718CD1FCA64E00B11ACEACD6A3D0967C94FEDCFCC239BA5CB83E19,
    0x3425581A58AE2FEC83AAFEF7C40EB545B08243F16B1655154CCA8ABC28D6FD04976D5243EECF5C4130DE8938DC62CD8,
    0x13A8E162022914A80A6F1D5F43E7A07DFFDFC759A12062BB8D6B44E833B306DA9BD29BA81F35781D539D395B3532A21E,
    0xE7355F8E4E667B955390F7F0506C6E9395735E9CE9CAD4D0A43BCEF24B8982F7400D24BC4228F11C02DF9A29F6304A5,
    0x772CAACF16936190F3E0C63E0596721570F5799AF53A1894E2E073062AEDE9CEA73B3538F0DE06CEC2574496EE84A3A,
    0x14A7AC2A9D64A8B230B3F5B074CF01996E7F63C21BCA68A81996E1CDF9822C580FA5B9489D11E2D311F7D99BBDCC5A5E,
    0xA10ECF6ADA54F825E920B3DAFC7A3CCE07F8D1D7161366B74100DA67F39883503826692ABBA43704776EC3A79A1D641,
    0x95FC13AB9E92AD4476D6E3EB3A56680F682B4EE96F7D03776DF533978F31C1593174E4B4B7865002D6384D168ECDD0A,
)
_H2C_ISO_Y_NUM = (
    0x90D97C81BA24EE0259D1F094980DCFA11AD138E48A869522B52AF6C956543D3CD0C7AEE9B3BA3C2BE9845719707BB33,
    0x134996A104EE5811D51036D776FB46831223E96C254F383D0F906343EB67AD34D6C56711962FA8BFE097E75A2E41C696,
    0xCC786BAA966E66F4A384C86A3B49942552E2D658A31CE2C344BE4B91400DA7D26D521628B00523B8DFE240C72DE1F6,
    0x1F86376E8981C217898751AD8746757D42AA7B90EEB791C09E4A3EC03251CF9DE405ABA9EC61DECA6355C77B0E5F4CB,
    0x8CC03FDEFE0FF135CAF4FE2A21529C4195536FBE3CE50B879833FD221351ADC2EE7F8DC099040A841B6DAECF2E8FEDB,
    0x16603FCA40634B6A2211E11DB8F0A6A074A7D0D4AFADB7BD76505C3D3AD5544E203F6326C95A807299B23AB13633A5F0,
    0x4AB0B9BCFAC1BBCB2C977D027796B3CE75BB8CA2BE184CB5231413C4D634F3747A87AC2460F415EC961F8855FE9D6F2,
    0x987C8D5333AB86FDE9926BD2CA6C674170A05BFE3BDD81FFD038DA6C26C842642F64550FEDFE935A15E4CA31870FB29,
    0x9FC4018BD96684BE88C9E221E4DA1BB8F3ABD16679DC26C1E8B6E6A1F20CABE69D65201C78607A360370E577BDBA587,
    0xE1BBA7A1186BDB5223ABDE7ADA14A23C42A0CA7915AF6FE06985E7ED1E4D43B9B3F7055DD4EBA6F2BAFAAEBCA731C30,
    0x19713E47937CD1BE0DFD0B8F1D43FB93CD2FCBCB6CAF493FD1183E416389E61031BF3A5CCE3FBAFCE813711AD011C132,
    0x18B46A908F36F6DEB918C143FED2EDCC523559B8AAF0C2462E6BFE7F911F643249D9CDF41B44D606CE07C8A4D0074D8E,
    0xB182CAC101B9399D155096004F53F447AA7B12A3426B08EC02710E807B4633F06C851C1919211F20D4C04F00B971EF8,
    0x245A394AD1ECA9B72FC00AE7BE315DC757B3B080D4C158013E6632D3C40659CC6CF90AD1C232A6442D9D3F5DB980133,
    0x5C129645E44CF1102A159F748C4A3FC5E673D81D7E86568D9AB0F5D396A7CE46BA1049B6579AFB7866B1E715475224B,
    0x15E6BE4E990F03CE4EA50B3B42DF2EB5CB181D8F84965A3957ADD4FA95AF01B2B665027EFEC01C7704B456BE69C8B604,
)
_H2C_ISO_Y_DEN = (
    0x16112C4C3A9C98B252181140FAD0EAE9601A6DE578980BE6EEC3232B5BE72E7A07F3688EF60C206D01479253B03663C1,
    0x1962D75C2381201E1A0CBD6C43C348B885C84FF731C4D59CA4A10356F453E01F78A4260763529E3532F6102C2E49A03D,
    0x58DF3306640DA276FAAAE7D6E8EB15778C4855551AE7F310C35A5DD279CD2ECA6757CD636F96F891E2538B53DBF67F2,
    0x16B7D288798E5395F20D23BF89EDB4D1D115C5DBDDBCD30E123DA489E726AF41727364F2C28297ADA8D26D98445F5416,
    0xBE0E079545F43E4B00CC912F8228DDCC6D19C9F0F69BBB0542EDA0FC9DEC916A20B15DC0FD2EDEDDA39142311A5001D,
    0x8D9E5297186DB2D9FB266EAAC783182B70152C65550D881C5ECD87B6F0F5A6449F38DB9DFA9CCE202C6477FAAF9B7AC,
    0x166007C08A99DB2FC3BA8734ACE9824B5EECFDFA8D0CF8EF5DD365BC400A0051D5FA9C01A58B1FB93D1A1399126A775C,
    0x16A3EF08BE3EA7EA03BCDDFABBA6FF6EE5A4375EFA1F4FD7FEB34FD206357132B920F5B00801DEE460EE415A15812ED9,
    0x1866C8ED336C61231A1BE54FD1D74CC4F9FB0CE4C6AF5920ABC5750C4BF39B4852CFE2F7BB9248836B233D9D55535D4A,
    0x167A55CDA70A6E1CEA820597D94A84903216F763E13D87BB5308592E7EA7D4FBC7385EA3D529B35E346EF48BB8913F55,
    0x4D2F259EEA405BD48F010A01AD2911D9C6DD039BB61A6290E591B36E636A5C871A5C29F4F83060400F8B49CBA8F6AA8,
    0xACCBB67481D033FF5852C1E48C50C477F94FF8AEFCE42D28C0F9A88CEA7913516F968986F7EBBEA9684B529E2561092,
    0xAD6B9514C767FE3C3613144B45F1496543346D98ADF02267D5CEEF9A00D9B8693000763E3B90AC11E99B138573345CC,
    0x2660400EB2E4F3B628BDD0D53CD76F2BF565B94E72927C1CB748DF27942480E420517BD8714CC80D1FADC1326ED06F7,
    0xE0FA1D816DDC03E6B24255E0D7819C171C40F65E273B853324EFCD6356CAA205CA2F570F13497804415473A1D634B8F,
)


def expand_message_xmd(msg: bytes, dst: bytes, len_in_bytes: int) -> bytes:
    """RFC 9380 section 5.3.1 with SHA-256: `len_in_bytes` uniformly random bytes from `msg`,
    domain-separated by `dst` (a DST over 255 bytes is first hashed, as section 5.3.3 says)."""
    if len(dst) > 255:
        dst = hashlib.sha256(b"H2C-OVERSIZE-DST-" + dst).digest()
    ell = -(-len_in_bytes // 32)
    if ell > 255 or len_in_bytes > 65535 or len_in_bytes < 0:
        raise ValueError(f"expand_message_xmd cannot give {len_in_bytes} bytes")
    dst_prime = dst + bytes([len(dst)])
    b_0 = hashlib.sha256(bytes(64) + msg + len_in_bytes.to_bytes(2, "big") + b"\x00" + dst_prime).digest()
    b_i = hashlib.sha256(b_0 + b"\x01" + dst_prime).digest()
    blocks = [b_i]
    for i in range(2, ell + 1):
        mixed = bytes(x ^ y for x, y in zip(b_0, b_i, strict=True))
        b_i = hashlib.sha256(mixed + bytes([i]) + dst_prime).digest()
        blocks.append(b_i)
    return b"".join(blocks)[:len_in_bytes]


def hash_to_field_fp(msg: bytes, dst: bytes, count: int) -> list[int]:
    """RFC 9380 section 5.2 for the base field (m = 1, L = 64): `count` elements of it."""
    uniform = expand_message_xmd(msg, dst, count * _H2C_L)
    return [int.from_bytes(uniform[i * _H2C_L : (i + 1) * _H2C_L], "big") % BLS12_381_P for i in range(count)]


def _h2c_sqrt(a: int) -> int | None:
    """A square root of `a` in the base field, or None if it has none."""
    root = pow(a, _H2C_SQRT_EXPONENT, BLS12_381_P)
    return root if root * root % BLS12_381_P == a % BLS12_381_P else None


def _h2c_sswu(u: int) -> tuple[int, int]:
    """The simplified SWU map (RFC 9380 section 6.6.2) onto E1', written plainly rather than as the
    straight-line program of Appendix F.2: both give the same point, and nothing here is secret."""
    p = BLS12_381_P
    z_u2 = _H2C_Z * u * u % p
    denominator = (z_u2 * z_u2 + z_u2) % p
    if denominator == 0:
        x1 = _H2C_B * pow(_H2C_Z * _H2C_A, -1, p) % p
    else:
        x1 = (-_H2C_B) * pow(_H2C_A, -1, p) * (1 + pow(denominator, -1, p)) % p
    y = _h2c_sqrt((x1 * x1 * x1 + _H2C_A * x1 + _H2C_B) % p)
    x = x1
    if y is None:
        # Then g(Z u^2 x1) is a square: RFC 9380 section 6.6.2 guarantees it for this Z.
        x = z_u2 * x1 % p
        y = _h2c_sqrt((x * x * x + _H2C_A * x + _H2C_B) % p)
        if y is None:  # pragma: no cover - excluded by the choice of Z
            raise ArithmeticError("simplified SWU found no square root")
    if u % 2 != y % 2:  # sgn0 for m = 1 is the parity (section 4.1)
        y = p - y
    return x, y


def _h2c_polynomial(coefficients: tuple[int, ...], x: int, monic: bool) -> int:
    """The polynomial with these coefficients (lowest degree first, and a leading 1 if `monic`) at
    x, by Horner's rule."""
    p = BLS12_381_P
    value = 1 if monic else 0
    for k in reversed(coefficients):
        value = (value * x + k) % p
    return value


def _h2c_iso_map(point: tuple[int, int]) -> G1Point:
    """The 11-isogeny from E1' to E1 (RFC 9380 section 6.6.3 and Appendix E.2)."""
    x, y = point
    x_den = _h2c_polynomial(_H2C_ISO_X_DEN, x, monic=True)
    y_den = _h2c_polynomial(_H2C_ISO_Y_DEN, x, monic=True)
    if x_den == 0 or y_den == 0:
        return None  # the isogeny's kernel: section 6.6.3 maps it to the identity
    p = BLS12_381_P
    x_num = _h2c_polynomial(_H2C_ISO_X_NUM, x, monic=False)
    y_num = _h2c_polynomial(_H2C_ISO_Y_NUM, x, monic=False)
    return x_num * pow(x_den, -1, p) % p, y * y_num * pow(y_den, -1, p) % p


def map_to_curve_g1(u: int) -> G1Point:
    """RFC 9380's map_to_curve for this suite: simplified SWU onto E1', then the 11-isogeny to E1
    (a point of E1, not yet cleared of its cofactor)."""
    return _h2c_iso_map(_h2c_sswu(u))


def g1_on_curve(point: G1Point) -> bool:
    """Whether the point lies on E1: y^2 = x^3 + 4 (infinity does)."""
    if point is None:
        return True
    x, y = point
    return (y * y - x * x * x - 4) % BLS12_381_P == 0


def g1_neg(point: G1Point) -> G1Point:
    """-P on E1."""
    return None if point is None else (point[0], -point[1] % BLS12_381_P)


def g1_add(one: G1Point, two: G1Point) -> G1Point:
    """P + Q on E1, for any two points of the curve (a doubling, inverses and infinity included)."""
    if one is None:
        return two
    if two is None:
        return one
    p = BLS12_381_P
    x1, y1 = one
    x2, y2 = two
    if x1 == x2:
        if (y1 + y2) % p == 0:
            return None  # Q = -P, or a point of order 2 doubled
        slope = 3 * x1 * x1 * pow(2 * y1, -1, p) % p
    else:
        slope = (y2 - y1) * pow(x2 - x1, -1, p) % p
    x3 = (slope * slope - x1 - x2) % p
    return x3, (slope * (x1 - x3) - y1) % p


def _h2c_jacobian_double(x: int, y: int, z: int) -> tuple[int, int, int]:
    """2P for P = (X/Z^2, Y/Z^3) on E1 (dbl-2009-l, for a = 0); Z = 0 is infinity, and a point of
    order 2 (Y = 0) doubles to Z = 0 by itself."""
    p = BLS12_381_P
    a, b = x * x % p, y * y % p
    c = b * b % p
    d = 2 * ((x + b) * (x + b) - a - c) % p
    e = 3 * a % p
    x3 = (e * e - 2 * d) % p
    return x3, (e * (d - x3) - 8 * c) % p, 2 * y * z % p


def _h2c_jacobian_add_affine(x1: int, y1: int, z1: int, x2: int, y2: int) -> tuple[int, int, int]:
    """P + Q for P Jacobian and Q = (x2, y2) affine, not infinity (madd-2007-bl)."""
    p = BLS12_381_P
    if z1 == 0:
        return x2, y2, 1
    z1z1 = z1 * z1 % p
    h = (x2 * z1z1 - x1) % p
    r = 2 * (y2 * z1 * z1z1 - y1) % p
    if h == 0:
        return _h2c_jacobian_double(x1, y1, z1) if r == 0 else (1, 1, 0)
    hh = h * h % p
    i = 4 * hh % p
    j = h * i % p
    v = x1 * i % p
    x3 = (r * r - j - 2 * v) % p
    return x3, (r * (v - x3) - 2 * y1 * j) % p, ((z1 + h) * (z1 + h) - z1z1 - hh) % p


def g1_mul(point: G1Point, scalar: int) -> G1Point:
    """[k]P on E1 for any point of it and k >= 0, by double-and-add from the top bit (k is
    public), in Jacobian coordinates: one inversion at the end instead of one per step."""
    if scalar < 0:
        raise ValueError("g1_mul takes a scalar of at least 0")
    if point is None or scalar == 0:
        return None
    x, y = point
    acc = (x, y, 1)
    for bit in bin(scalar)[3:]:
        acc = _h2c_jacobian_double(*acc)
        if bit == "1":
            acc = _h2c_jacobian_add_affine(*acc, x, y)
    if acc[2] == 0:
        return None
    z_inv = pow(acc[2], -1, BLS12_381_P)
    z_inv2 = z_inv * z_inv % BLS12_381_P
    return acc[0] * z_inv2 % BLS12_381_P, acc[1] * z_inv2 * z_inv % BLS12_381_P


def hash_to_g1(message: bytes, dst: bytes) -> G1Point:
    """RFC 9380 hash_to_curve for BLS12381G1_XMD:SHA-256_SSWU_RO_: the message's point of G1
    (None only with negligible probability, when the sum of the two mapped points clears to the
    identity)."""
    u0, u1 = hash_to_field_fp(message, dst, 2)
    return g1_mul(g1_add(map_to_curve_g1(u0), map_to_curve_g1(u1)), _H2C_H_EFF)
