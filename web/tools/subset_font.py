#!/usr/bin/env python3
"""subset_font.py — a minimal TrueType subsetter for the page's fonts (standard library only).

The page draws text with Dear ImGui's stb_truetype, which needs only cmap, head, hhea, hmtx, maxp, loca and glyf.
This keeps those tables for the characters the page uses (renumbering glyphs, composite components included), drops
the glyphs' hinting instructions (stb_truetype does not run them) and writes them as C++ byte arrays, so a 760 KB
DejaVu Sans becomes ~10 KB in the wasm.

    python3 subset_font.py OUT.cpp NAME=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf [NAME=...]
    python3 subset_font.py --check REPO_ROOT   # every character the sources and data may show is in RANGES

A missing font file gives an empty array (size 0): the page then falls back to Dear ImGui's built-in font.
"""
import struct
import sys

# The characters the page draws: printable ASCII and the symbols its text uses (the page's and the core's string
# literals; presets and bench_data are ASCII). `subset_font.py --check ROOT` (the ctest web_font_glyphs) fails when a
# string literal of web/ or core/, or an embedded preset or table, has a character outside these ranges: add it here.
# Anything else (a character typed into the scenario editor) is drawn as ImGui's '?'.
RANGES = [(0x20, 0x7E), (0xA7, 0xA7), (0xB1, 0xB1), (0xB5, 0xB5), (0xB7, 0xB7), (0xD7, 0xD7), (0x2013, 0x2014),
          (0x2026, 0x2026), (0x2192, 0x2192), (0x2194, 0x2194), (0x2212, 0x2212), (0x2264, 0x2265), (0x25A0, 0x25A0),
          (0x25CF, 0x25CF), (0x26A0, 0x26A0), (0x2713, 0x2713), (0x2717, 0x2717)]


def literal_chars(src):
    """The non-ASCII characters of a C++ source's string and character literals (raw UTF-8 or \\u escapes)."""
    import re
    out = set()
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith('//', i):
            i = src.find('\n', i)
            i = n if i < 0 else i
        elif src.startswith('/*', i):
            i = src.find('*/', i + 2)
            i = n if i < 0 else i + 2
        elif c == 'R' and src.startswith('"', i + 1) and not (i and (src[i - 1].isalnum() or src[i - 1] == '_')
                                                                 and src[i - 1] not in 'uU8L'):
            d = src.index('(', i + 2)
            end = src.index(')' + src[i + 2:d] + '"', d)
            out |= {ch for ch in src[d + 1:end] if ord(ch) > 0x7E}
            i = end + d - i
        elif c == "'" and i and src[i - 1].isalnum():  # a digit separator (100'000)
            i += 1
        elif c in '"\'':
            j = i + 1
            while j < n and src[j] != c and src[j] != '\n':
                j += 2 if src[j] == '\\' else 1
            lit = src[i + 1:j]
            out |= {ch for ch in lit if ord(ch) > 0x7E}
            out |= {chr(int(h, 16)) for h in re.findall(r'\\u([0-9A-Fa-f]{4})', lit)}
            out |= {chr(int(h, 16)) for h in re.findall(r'\\U([0-9A-Fa-f]{8})', lit)}
            i = j + 1
        else:
            i += 1
    return out


def check(root):
    """Every character the page may draw from the sources and the embedded data is in RANGES."""
    import glob
    import os
    have = {c for lo, hi in RANGES for c in range(lo, hi + 1)}
    missing = {}
    for pattern in ('web/*.cpp', 'web/*.h', 'core/**/*.cpp', 'core/**/*.h'):
        for path in sorted(glob.glob(os.path.join(root, pattern), recursive=True)):
            with open(path, encoding='utf-8') as f:
                chars = literal_chars(f.read())
            for ch in chars:
                if ord(ch) not in have and ch not in '\t\n\r\x1b':
                    missing.setdefault(ch, path)
    for pattern in ('presets/**/*.json', 'bench_data/**/*.csv'):
        for path in sorted(glob.glob(os.path.join(root, pattern), recursive=True)):
            with open(path, encoding='utf-8') as f:
                for ch in f.read():
                    if ord(ch) > 0x7E and ord(ch) not in have:
                        missing.setdefault(ch, path)
    for ch, path in sorted(missing.items()):
        print('U+%04X %r (%s) is not in subset_font.py RANGES: the page would draw it as "?"' % (ord(ch), ch, path))
    return 1 if missing else 0


def tables_of(data):
    num = struct.unpack_from('>H', data, 4)[0]
    out = {}
    for i in range(num):
        tag, _check, off, length = struct.unpack_from('>4sIII', data, 12 + 16 * i)
        out[tag.decode('latin-1')] = data[off:off + length]
    return out


def parse_cmap(cmap):
    """Unicode -> glyph id from the best Unicode subtable (format 4 or 12)."""
    n = struct.unpack_from('>H', cmap, 2)[0]
    best = None
    for i in range(n):
        pid, eid, off = struct.unpack_from('>HHI', cmap, 4 + 8 * i)
        fmt = struct.unpack_from('>H', cmap, off)[0]
        if (pid == 3 and eid in (1, 10)) or pid == 0:
            if best is None or fmt == 12:
                best = (fmt, off)
    if best is None:
        raise SystemExit('no Unicode cmap')
    fmt, off = best
    m = {}
    if fmt == 4:
        segx2 = struct.unpack_from('>H', cmap, off + 6)[0]
        seg = segx2 // 2
        ends = struct.unpack_from('>%dH' % seg, cmap, off + 14)
        starts = struct.unpack_from('>%dH' % seg, cmap, off + 16 + segx2)
        deltas = struct.unpack_from('>%dh' % seg, cmap, off + 16 + 2 * segx2)
        ro_pos = off + 16 + 3 * segx2
        ros = struct.unpack_from('>%dH' % seg, cmap, ro_pos)
        for s in range(seg):
            for c in range(starts[s], ends[s] + 1):
                if c == 0xFFFF:
                    continue
                if ros[s] == 0:
                    g = (c + deltas[s]) & 0xFFFF
                else:
                    p = ro_pos + 2 * s + ros[s] + 2 * (c - starts[s])
                    g = struct.unpack_from('>H', cmap, p)[0]
                    if g:
                        g = (g + deltas[s]) & 0xFFFF
                if g:
                    m[c] = g
    elif fmt == 12:
        ngroups = struct.unpack_from('>I', cmap, off + 12)[0]
        for k in range(ngroups):
            a, b, g0 = struct.unpack_from('>III', cmap, off + 16 + 12 * k)
            for c in range(a, b + 1):
                m[c] = g0 + c - a
    return m


def glyph_slices(t):
    long_loca = struct.unpack_from('>h', t['head'], 50)[0] == 1
    nglyphs = struct.unpack_from('>H', t['maxp'], 4)[0]
    if long_loca:
        loca = struct.unpack_from('>%dI' % (nglyphs + 1), t['loca'])
    else:
        loca = [2 * v for v in struct.unpack_from('>%dH' % (nglyphs + 1), t['loca'])]
    return [t['glyf'][loca[i]:loca[i + 1]] for i in range(nglyphs)]


def component_records(g):
    """A composite glyph's component records, as ([(offset, flags, component glyph id)], offset past the last): each
    record is flags, glyph id, two arguments of 1 or 2 bytes, then a scale of 0, 2, 4 or 8 bytes; MORE_COMPONENTS
    (0x20) says another follows."""
    out = []
    p = 10
    while True:
        flags, gid = struct.unpack_from('>HH', g, p)
        out.append((p, flags, gid))
        p += 4
        p += 4 if flags & 0x1 else 2
        if flags & 0x8:
            p += 2
        elif flags & 0x40:
            p += 4
        elif flags & 0x80:
            p += 8
        if not flags & 0x20:
            return out, p


def components(g):
    """(offset of the glyph index, component glyph id) of a composite glyph."""
    if len(g) < 10 or struct.unpack_from('>h', g, 0)[0] >= 0:
        return []
    return [(p + 2, gid) for p, _, gid in component_records(g)[0]]


def without_instructions(g):
    """A glyph without its TrueType hinting instructions, which stb_truetype never runs (it draws the outlines as they
    are): the same shapes in about half the bytes. The outlines and a composite's components are unchanged."""
    if len(g) < 10:
        return g
    contours = struct.unpack_from('>h', g, 0)[0]
    if contours >= 0:  # simple: header, endPtsOfContours, instructionLength, instructions, then flags and points
        p = 10 + 2 * contours
        n = struct.unpack_from('>H', g, p)[0]
        return g[:p] + b'\0\0' + g[p + 2 + n:]
    b = bytearray(g)  # composite: components, then the instructions if a component has WE_HAVE_INSTRUCTIONS (0x100)
    records, end = component_records(g)
    for p, flags, _ in records:
        struct.pack_into('>H', b, p, flags & ~0x100)
    return bytes(b[:end])


def checksum(b):
    b = b + b'\0' * (-len(b) % 4)
    return sum(struct.unpack('>%dI' % (len(b) // 4), b)) & 0xFFFFFFFF


def cmap_format4(mapping):
    codes = sorted(mapping)
    segs = []  # (start, end, delta) with consecutive codes and consecutive glyph ids
    for c in codes:
        g = mapping[c]
        if segs and c == segs[-1][1] + 1 and g - c == segs[-1][2]:
            segs[-1][1] = c
        else:
            segs.append([c, c, g - c])
    segs.append([0xFFFF, 0xFFFF, 1])
    n = len(segs)
    search = 2 ** (n.bit_length() - 1) * 2
    body = struct.pack('>HHHH', n * 2, search, (search // 2).bit_length() - 1, n * 2 - search)
    body += struct.pack('>%dH' % n, *[s[1] for s in segs]) + b'\0\0'
    body += struct.pack('>%dH' % n, *[s[0] for s in segs])
    body += struct.pack('>%dh' % n, *[((s[2] + 0x8000) & 0xFFFF) - 0x8000 for s in segs])
    body += struct.pack('>%dH' % n, *([0] * n))
    sub = struct.pack('>HHH', 4, 6 + len(body), 0) + body
    return struct.pack('>HHHHI', 0, 1, 3, 1, 12) + sub


def subset(data):
    t = tables_of(data)
    cmap = parse_cmap(t['cmap'])
    glyphs = glyph_slices(t)
    nmetrics = struct.unpack_from('>H', t['hhea'], 34)[0]
    metrics = [struct.unpack_from('>Hh', t['hmtx'], 4 * min(i, nmetrics - 1)) for i in range(len(glyphs))]
    for i in range(nmetrics, len(glyphs)):  # glyphs past numberOfHMetrics share the last advance, own lsb
        metrics[i] = (metrics[nmetrics - 1][0], struct.unpack_from('>h', t['hmtx'], 4 * nmetrics + 2 * (i - nmetrics))[0])

    wanted = {c: cmap[c] for lo, hi in RANGES for c in range(lo, hi + 1) if c in cmap}
    order = [0]
    queue = sorted(set(wanted.values()))
    while queue:
        g = queue.pop(0)
        if g in order:
            continue
        order.append(g)
        queue += [cg for _, cg in components(glyphs[g]) if cg not in order]
    new_id = {g: i for i, g in enumerate(order)}

    glyf = b''
    loca = [0]
    for g in order:
        b = bytearray(without_instructions(glyphs[g]))
        for pos, cg in components(glyphs[g]):
            struct.pack_into('>H', b, pos, new_id[cg])
        b += b'\0' * (-len(b) % 4)
        glyf += bytes(b)
        loca.append(len(glyf))
    head = bytearray(t['head'])
    struct.pack_into('>I', head, 8, 0)      # checkSumAdjustment (not checked by stb_truetype)
    struct.pack_into('>h', head, 50, 1)     # long loca
    maxp = bytearray(t['maxp'])
    struct.pack_into('>H', maxp, 4, len(order))
    hhea = bytearray(t['hhea'])
    struct.pack_into('>H', hhea, 34, len(order))
    hmtx = b''.join(struct.pack('>Hh', *metrics[g]) for g in order)
    new = {
        'cmap': cmap_format4({c: new_id[g] for c, g in wanted.items()}),
        'glyf': glyf, 'head': bytes(head), 'hhea': bytes(hhea), 'hmtx': hmtx,
        'loca': struct.pack('>%dI' % len(loca), *loca), 'maxp': bytes(maxp),
    }
    tags = sorted(new)
    n = len(tags)
    search = 2 ** (n.bit_length() - 1) * 16
    out = struct.pack('>IHHHH', 0x00010000, n, search, (search // 16).bit_length() - 1, n * 16 - search)
    offset = 12 + 16 * n
    body = b''
    for tag in tags:
        b = new[tag]
        out += struct.pack('>4sIII', tag.encode(), checksum(b), offset + len(body), len(b))
        body += b + b'\0' * (-len(b) % 4)
    return out + body


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--check':
        raise SystemExit(check(sys.argv[2]))
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    lines = ['// Generated by web/tools/subset_font.py: subsets of system fonts for the page (see web/theme.cpp).',
             '#include <cstddef>', 'namespace web {']
    for spec in sys.argv[2:]:
        name, path = spec.split('=', 1)
        try:
            with open(path, 'rb') as f:
                data = subset(f.read())
            src = path
        except OSError:
            data, src = b'', 'missing: ' + path
        lines.append('// %s (%d bytes) from %s' % (name, len(data), src))
        body = ','.join(str(b) for b in data) if data else '0'
        lines.append('extern const unsigned char %s[] = {%s};' % (name, body))
        lines.append('extern const std::size_t %s_size = %d;' % (name, len(data)))
    # The same ranges for ImGui's atlas (web/theme.cpp): zero-terminated pairs of ImWchar (16 bits).
    pairs = ', '.join('0x%04X, 0x%04X' % r for r in RANGES)
    lines.append('extern const unsigned short font_glyph_ranges[] = {%s, 0};' % pairs)
    lines.append('}  // namespace web')
    text = '\n'.join(lines) + '\n'
    try:
        with open(sys.argv[1]) as f:
            if f.read() == text:
                return
    except OSError:
        pass
    with open(sys.argv[1], 'w') as f:
        f.write(text)


if __name__ == '__main__':
    main()
