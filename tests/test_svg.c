/* test_svg.c — the SVG writer, the attention heatmap and the training plot, checked on
 * the SVG text itself (no browser needed): XML escaping and invalid UTF-8, the colour
 * scale, a small XML well-formedness checker run over every document, one <rect> per
 * heatmap cell, every token present as text, finite numbers, 1-2-5 axis ticks, and a
 * train.log with malformed lines. Writes only to temporary files under $TMPDIR or /tmp. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utf8proc.h>

#include "check.h"
#include "decode/heatmap.h"
#include "io/outfile.h"
#include "train/plot.h"
#include "io/svg.h"

/* ---------------------------------------------------------------- helpers */

static int valid_utf8(const char *s)
{
    size_t len = strlen(s);
    for (size_t i = 0; i < len;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t n = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(len - i), &cp);
        if (n <= 0) return 0;
        i += (size_t)n;
    }
    return 1;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* Every number in s (separated by spaces, commas or parentheses) parses and is finite. */
static int numbers_finite(const char *s, int need_one)
{
    int seen = 0;
    while (*s) {
        while (*s && strchr(" ,()", *s)) s++;
        if (!*s) break;
        char *end;
        double v = strtod(s, &end);
        if (end == s || !isfinite(v)) return 0;
        s = end;
        seen++;
    }
    return seen >= need_one;
}

/* The attribute value as a NUL-terminated copy in buf. */
static void copy_value(const char *from, size_t n, char *buf, size_t cap)
{
    if (n >= cap) n = cap - 1;
    memcpy(buf, from, n);
    buf[n] = 0;
}

/* An entity we write: &amp; &lt; &gt; &quot; &apos; */
static int entity_at(const char *p)
{
    static const char *ok[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
    for (int k = 0; k < 5; k++)
        if (!strncmp(p, ok[k], strlen(ok[k]))) return 1;
    return 0;
}

/* NULL if doc is one well-formed element tree of the kind we write: tags balanced and
 * nested, attributes quoted, no raw '<' or stray '&' in text or values, every numeric
 * attribute (coordinates, sizes, points, viewBox, transform) finite; else the reason. */
static const char *xml_problem(const char *doc)
{
    static const char *numeric[] = {"x", "y", "width", "height", "x1", "y1", "x2", "y2", "cx", "cy", "r",
                                    "font-size", "stroke-width", "points", "viewBox", "transform"};
    static char why[160];
    char stack[32][16], name[16], attr[32], value[4096];
    int depth = 0, roots = 0;
    if (!valid_utf8(doc)) return "not valid UTF-8";
    for (const char *p = doc; *p;) {
        if (*p != '<') {
            if (depth == 0 && !strchr(" \n\t\r", *p)) return "text outside the root element";
            if (*p == '&' && !entity_at(p)) return "a raw '&' in text";
            if (*p == '>') return "a raw '>' in text";
            p++;
            continue;
        }
        int closing = p[1] == '/';
        p += closing ? 2 : 1;
        size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-:");
        if (n == 0 || n >= sizeof name) return "a bad tag name";
        copy_value(p, n, name, sizeof name);
        p += n;
        if (closing) {
            if (*p != '>') return "junk in a closing tag";
            p++;
            if (depth == 0 || strcmp(stack[depth - 1], name)) {
                snprintf(why, sizeof why, "</%s> does not close <%s>", name, depth ? stack[depth - 1] : "");
                return why;
            }
            depth--;
            continue;
        }
        if (depth == 0 && ++roots > 1) return "more than one root element";
        for (;;) {
            while (*p == ' ' || *p == '\n') p++;
            if (*p == '>' || (p[0] == '/' && p[1] == '>')) break;
            n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-:");
            if (n == 0 || n >= sizeof attr || p[n] != '=' || p[n + 1] != '"') {
                snprintf(why, sizeof why, "a bad attribute at \"%.30s\"", p);
                return why;
            }
            copy_value(p, n, attr, sizeof attr);
            p += n + 2;
            const char *end = strchr(p, '"');
            if (!end) return "an unterminated attribute value";
            copy_value(p, (size_t)(end - p), value, sizeof value);
            for (const char *q = value; *q; q++) {
                if (*q == '<') return "a raw '<' in an attribute value";
                if (*q == '&' && !entity_at(q)) return "a raw '&' in an attribute value";
            }
            for (size_t k = 0; k < sizeof numeric / sizeof numeric[0]; k++) {
                if (strcmp(attr, numeric[k])) continue;
                const char *nums = value;
                if (!strcmp(attr, "transform")) nums = strchr(value, '(') ? strchr(value, '(') : "";
                if (!numbers_finite(nums, 1)) {
                    snprintf(why, sizeof why, "%s=\"%.60s\" is not finite numbers", attr, value);
                    return why;
                }
            }
            p = end + 1;
        }
        if (*p == '/') {
            p += 2;
        } else {
            if (depth == (int)(sizeof stack / sizeof stack[0])) return "nested too deep";
            strcpy(stack[depth++], name);
            p++;
        }
    }
    if (depth) return "unclosed elements at the end";
    if (roots != 1) return "no root element";
    return NULL;
}

/* Runs a writer into memory and returns the document (malloc'd). */
typedef struct {
    char *buf;
    size_t len;
    FILE *f;
} Mem;

static FILE *mem_open(Mem *m)
{
    m->buf = NULL;
    m->len = 0;
    m->f = open_memstream(&m->buf, &m->len);
    return m->f;
}

static char *mem_close(Mem *m)
{
    fclose(m->f);
    return m->buf;
}

/* The text of the first element group <g class="NAME"> ... </g>, malloc'd ("" if absent). */
static char *group(const char *doc, const char *name)
{
    char open[64];
    snprintf(open, sizeof open, "<g class=\"%s\">", name);
    const char *a = strstr(doc, open);
    if (!a) return xstrdup("");
    const char *b = strstr(a, "</g>");
    size_t n = b ? (size_t)(b - a) : strlen(a);
    char *s = xmalloc(n + 1);
    memcpy(s, a, n);
    s[n] = 0;
    return s;
}

/* ---------------------------------------------------------------- escaping */

static void check_escape(const char *in, const char *want, const char *what)
{
    char *got = svg_escape(in);
    int ok = !strcmp(got, want);
    CHECK(ok, what);
    if (!ok) fprintf(stderr, "    got \"%s\", want \"%s\"\n", got, want);
    Mem m;
    svg_put_escaped(mem_open(&m), in);
    char *streamed = mem_close(&m);
    CHECK(!strcmp(streamed, got), "svg_put_escaped writes what svg_escape returns");
    free(streamed);
    free(got);
}

static void test_escape(void)
{
    check_escape("a&b<c>\"d'e", "a&amp;b&lt;c&gt;&quot;d&apos;e", "escape: the five XML specials");
    check_escape("&amp;", "&amp;amp;", "escape: an entity in the input is text, escaped again");
    check_escape("", "", "escape: empty string");
    check_escape("नमस्ते Привет 我们 ½", "नमस्ते Привет 我们 ½", "escape: Devanagari, Cyrillic, CJK kept as given");
    check_escape("a\xff" "b", "a\xEF\xBF\xBD" "b", "escape: an invalid byte becomes U+FFFD, the rest kept");
    check_escape("\xe0\xa4", "\xEF\xBF\xBD\xEF\xBF\xBD", "escape: a truncated sequence: one U+FFFD per byte");
    check_escape("\xc0\xaf", "\xEF\xBF\xBD\xEF\xBF\xBD", "escape: an overlong '/' is refused");
    check_escape("\xed\xa0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD", "escape: a UTF-8 surrogate is refused");
    check_escape("a\x01" "b\tc\nd\x7f" "e\xc2\x85", "a\xEF\xBF\xBD" "b\xEF\xBF\xBD" "c\xEF\xBF\xBD" "d\xEF\xBF\xBD"
                 "e\xEF\xBF\xBD", "escape: C0, tab, newline, DEL and C1 controls become U+FFFD");
    check_escape("\xef\xbf\xbe", "\xEF\xBF\xBD", "escape: the noncharacter U+FFFE becomes U+FFFD");
    /* Worst case for the output size: every byte a 6-byte entity. */
    char *many = svg_escape("\"\"\"\"\"\"\"\"");
    CHECK(strlen(many) == 48, "escape: 8 quotes give 48 bytes");
    free(many);

    CHECK(svg_text_columns("abc") == 3, "columns: ASCII 1 each");
    CHECK(svg_text_columns("我们") == 4, "columns: CJK 2 each");
    CHECK(svg_text_columns("नमस्ते") == 4, "columns: Devanagari virama and vowel sign count 0");
    CHECK(svg_text_columns("a\xff") == 2, "columns: an invalid byte counts 1");
    CHECK(fabs(svg_text_width("我", 10) - 10) < 1e-9, "width: a CJK character is 1 em");
    CHECK(svg_text_width("i", 10) < svg_text_width("m", 10), "width: i is narrower than m");
    CHECK(svg_text_width("мир", 10) >= 3 * 6.7, "width: Cyrillic at least its measured 0.67 em average");
    CHECK(svg_text_width("", 10) == 0, "width: empty string");
}

/* ---------------------------------------------------------------- colour */

static double luminance(const char *hex)
{
    unsigned r, g, b;
    if (sscanf(hex, "#%2x%2x%2x", &r, &g, &b) != 3) return -1;
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

static void test_colour(void)
{
    char c[8];
    svg_viridis(0, c);
    CHECK(!strcmp(c, "#440154"), "viridis(0) is #440154");
    svg_viridis(1, c);
    CHECK(!strcmp(c, "#fde725"), "viridis(1) is #fde725");
    svg_viridis(0.5, c);
    CHECK(!strcmp(c, "#21908c"), "viridis(0.5) is #21908c");
    svg_viridis(-3, c);
    CHECK(!strcmp(c, "#440154"), "viridis clamps below 0");
    svg_viridis(7, c);
    CHECK(!strcmp(c, "#fde725"), "viridis clamps above 1");
    svg_viridis(NAN, c);
    CHECK(!strcmp(c, "#440154"), "viridis(NaN) is the 0 colour");
    /* Perceptually sensible: lightness rises with the value, all the way. */
    int monotonic = 1, format = 1;
    double prev = -1;
    for (int k = 0; k <= 200; k++) {
        svg_viridis(k / 200.0, c);
        double l = luminance(c);
        format &= strlen(c) == 7 && l >= 0;
        if (!(l > prev)) monotonic = 0;
        prev = l;
    }
    CHECK(format, "viridis writes #rrggbb");
    CHECK(monotonic, "viridis: luminance strictly increasing over 201 samples");
}

/* ---------------------------------------------------------------- writer */

static void test_writer(void)
{
    Mem m;
    Svg svg;
    svg_begin(&svg, mem_open(&m), 120.5, 80);
    svg_group_begin(&svg, "a\"b", 3, 4);
    svg_rect(&svg, NAN, INFINITY, -5, 10, "#123456", "black", "tip <1>");
    double xs[] = {0, 1.234, 2}, ys[] = {0, NAN, 5};
    svg_polyline(&svg, xs, ys, 3, "red", 1.5, "4 2");
    svg_polyline(&svg, xs, ys, 0, "red", 1, NULL);
    svg_line(&svg, 0, 0, 1e300 * 1e300, 1, NULL, 1, NULL);
    svg_circle(&svg, 1, 2, 3, "blue", NULL);
    SvgText st = svg_text_style(12);
    st.anchor = SVG_ANCHOR_END;
    st.rotate_deg = -45;
    st.bold = 1;
    st.middle_baseline = 1;
    svg_text(&svg, 10, 20, "x < y & 'z'", &st);
    svg_group_end(&svg);
    svg_end(&svg);
    char *doc = mem_close(&m);
    const char *why = xml_problem(doc);
    CHECK(!why, "writer: the document is well-formed with finite numbers");
    if (why) fprintf(stderr, "    %s\n", why);
    CHECK(!strncmp(doc, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39), "writer: starts with <svg xmlns=...");
    CHECK(strstr(doc, "width=\"120.5\" height=\"80\" viewBox=\"0 0 120.5 80\"") != NULL,
          "writer: width, height and a matching viewBox");
    CHECK(strstr(doc, "font-family=\"" SVG_FONT_FAMILY "\"") != NULL, "writer: the root carries the font list");
    CHECK(strstr(SVG_FONT_FAMILY, "Devanagari") && strstr(SVG_FONT_FAMILY, "CJK") && strstr(SVG_FONT_FAMILY, "DejaVu"),
          "writer: the font list names Devanagari, CJK and DejaVu (Latin, Cyrillic) fonts");
    /* DejaVu has no Devanagari: the families of both Debian packages that do
     * (fonts-noto-core, fonts-lohit-deva), which the README names. */
    CHECK(strstr(SVG_FONT_FAMILY, "Noto Sans Devanagari, ") && strstr(SVG_FONT_FAMILY, "Lohit Devanagari, "),
          "writer: the font list names Noto Sans Devanagari and Lohit Devanagari");
    CHECK(strstr(doc, "class=\"a&quot;b\" transform=\"translate(3 4)\"") != NULL, "writer: group class and translation");
    CHECK(strstr(doc, "<rect x=\"0\" y=\"0\" width=\"0\" height=\"10\"") != NULL,
          "writer: NaN and infinity written as 0, a negative width as 0");
    CHECK(strstr(doc, "<title>tip &lt;1&gt;</title></rect>") != NULL, "writer: rect tooltip escaped");
    CHECK(strstr(doc, "points=\"0,0 1.23,0 2,5\"") != NULL, "writer: polyline points, two decimals, NaN as 0");
    CHECK(count(doc, "<polyline") == 1, "writer: an empty polyline writes nothing");
    CHECK(strstr(doc, "text-anchor=\"end\" dominant-baseline=\"central\" font-weight=\"bold\"") != NULL,
          "writer: text anchor, baseline and weight");
    CHECK(strstr(doc, "transform=\"rotate(-45 10 20)\">x &lt; y &amp; &apos;z&apos;</text>") != NULL,
          "writer: text rotated about its anchor, content escaped");
    free(doc);

    Error err;
    OutFile o;
    CHECK(outfile_open(&o, "/nonexistent-dir/x.svg", &err) == -1 && strstr(err.msg, "/nonexistent-dir/x.svg"),
          "an SVG file: an unwritable path fails, naming it");
    if (outfile_open(&o, "/dev/full", &err) == 0) {
        Svg s2;
        svg_begin(&s2, o.f, 10, 10);
        svg_end(&s2);
        CHECK(outfile_commit(&o, &err) == -1 && strstr(err.msg, "/dev/full"),
              "an SVG file: a failed write (/dev/full) is reported, naming the path");
        struct stat st_full;
        CHECK(stat("/dev/full", &st_full) == 0, "an SVG file: a device is not removed on failure");
    }
}

/* ---------------------------------------------------------------- heatmap */

static char *heatmap_doc(const char *title, const char *const *src, int n_src, const char *const *out, int n_out,
                         const float *attn)
{
    Mem m;
    Error err;
    int rc = heatmap_write_svg_to(mem_open(&m), title, src, n_src, out, n_out, attn, &err);
    char *doc = mem_close(&m);
    CHECK(rc == 0, "heatmap: written");
    return doc;
}

/* Every token appears as the whole content of a <text> element, escaped. */
static int tokens_present(const char *doc, const char *const *tok, int n)
{
    for (int i = 0; i < n; i++) {
        char *e = svg_escape(tok[i]);
        size_t need = strlen(e) + 16;
        char *pat = xmalloc(need);
        snprintf(pat, need, ">%s</text>", e);
        int found = strstr(doc, pat) != NULL;
        if (!found) fprintf(stderr, "    token \"%s\" missing\n", tok[i]);
        free(pat);
        free(e);
        if (!found) return 0;
    }
    return 1;
}

/* The smallest x (or y) attribute of the rects in a group. */
static double min_attr(const char *grp, const char *attr)
{
    char pat[16];
    snprintf(pat, sizeof pat, " %s=\"", attr);
    double best = INFINITY;
    for (const char *p = strstr(grp, pat); p; p = strstr(p + 1, pat)) {
        double v = strtod(p + strlen(pat), NULL);
        if (v < best) best = v;
    }
    return best;
}

static void test_heatmap(void)
{
    const char *src[] = {"I", "don't", "know", "<what>", "&", "happened", "."};
    const char *out[] = {"मला", "काल", "काय", "झालं", "Привет", "我们", "माहीत नाही", "."};
    enum { NS = 7, NO = 8 };
    float attn[NO * NS];
    for (int i = 0; i < NO; i++)
        for (int j = 0; j < NS; j++) attn[i * NS + j] = (float)(1.0 / (1 + abs(i - j)));
    char *doc = heatmap_doc("Attention: \"I don't know\" → मराठी", src, NS, out, NO, attn);
    const char *why = xml_problem(doc);
    CHECK(!why, "heatmap: well-formed XML, finite numbers");
    if (why) fprintf(stderr, "    %s\n", why);
    char *cells = group(doc, "cells");
    CHECK(count(cells, "<rect") == NO * NS, "heatmap: one <rect> per (output, source) cell");
    CHECK(count(cells, " fill=\"#") == NO * NS, "heatmap: every cell has a #rrggbb fill");
    CHECK(count(cells, "<title>") == NO * NS, "heatmap: every cell has a tooltip");
    CHECK(strstr(cells, "<title>&lt;what&gt; → काय: 0.500</title>") != NULL, "heatmap: a tooltip gives source → output: weight");
    CHECK(tokens_present(doc, src, NS), "heatmap: every source token is a <text>");
    CHECK(tokens_present(doc, out, NO), "heatmap: every output token is a <text>");
    CHECK(strstr(doc, ">Attention: &quot;I don&apos;t know&quot; → मराठी</text>") != NULL, "heatmap: the title");
    char *srcg = group(doc, "source");
    CHECK(count(srcg, "rotate(-45 ") == NS, "heatmap: source labels rotated");
    char *legend = group(doc, "legend");
    CHECK(strstr(legend, ">0.0</text>") && strstr(legend, ">1.00</text>"), "heatmap: legend labelled 0 and the max 1.00");
    char c0[8], c1[8];
    svg_viridis(0, c0);
    svg_viridis(1, c1);
    CHECK(count(cells, c1) == NO - 1, "heatmap: the diagonal weights 1.0 get the top colour");
    free(cells);
    free(srcg);
    free(legend);
    free(doc);

    /* Labels never overlap the grid: a long output label pushes the grid right, long
     * source labels push it down, by at least their estimated extent. */
    const char *long_out[] = {"internationalisation", "x"};
    const char *long_src[] = {"a", "counterrevolutionaries"};
    float a4[4] = {0.25f, 0.75f, 0.5f, 0.5f};
    doc = heatmap_doc(NULL, long_src, 2, long_out, 2, a4);
    cells = group(doc, "cells");
    CHECK(min_attr(cells, "x") >= svg_text_width("internationalisation", 14) + 8,
          "heatmap: the grid starts right of the longest output label");
    CHECK(min_attr(cells, "y") >= svg_text_width("counterrevolutionaries", 14) * 0.7071,
          "heatmap: the grid starts below the rotated source labels");
    CHECK(count(doc, ">0.75</text>") == 1, "heatmap: the legend's top is the largest weight, 0.75");
    CHECK(count(cells, c1) == 1 && count(cells, c0) == 0, "heatmap: the scale runs 0 .. max: 0.75 is the top colour");
    double w = strtod(strstr(doc, "width=\"") + 7, NULL);
    CHECK(w >= min_attr(cells, "x") + 2 * 28 + 28 + 16, "heatmap: the document is wide enough for grid and legend");
    free(cells);
    free(doc);

    /* Overlong tokens are cut; odd weights stay finite; invalid UTF-8 is replaced. */
    char huge[300];
    memset(huge, 'w', sizeof huge - 1);
    huge[sizeof huge - 1] = 0;
    const char *odd_src[] = {huge, "bad\xff", ""};
    const char *odd_out[] = {"ok"};
    float odd[3] = {NAN, 5.0f, -1.0f};
    doc = heatmap_doc("odd\x01title", odd_src, 3, odd_out, 1, odd);
    why = xml_problem(doc);
    CHECK(!why, "heatmap with NaN, out-of-range weights, invalid UTF-8: well-formed");
    if (why) fprintf(stderr, "    %s\n", why);
    CHECK(strstr(doc, ">wwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwww…</text>") != NULL,
          "heatmap: a 299-character token is cut to 39 characters and …");
    CHECK(strstr(doc, ">bad\xEF\xBF\xBD</text>") != NULL, "heatmap: an invalid byte is shown as U+FFFD");
    CHECK(strstr(doc, "#bbbbbb") && strstr(doc, ": n/a</title>"), "heatmap: a NaN weight is a grey cell, n/a");
    CHECK(strstr(doc, ": 1.000</title>") && strstr(doc, ": 0.000</title>"), "heatmap: weights clamped to [0, 1]");
    free(doc);

    /* A 5000-word sentence as the title is cut, and the document stays a sane width. */
    size_t long_n = 5000 * 5;
    char *long_title = xmalloc(long_n + 1);
    for (size_t k = 0; k < long_n; k++) long_title[k] = k % 5 == 4 ? ' ' : 'a';
    long_title[long_n] = 0;
    doc = heatmap_doc(long_title, src, 2, out, 2, attn);
    CHECK(strtod(strstr(doc, "width=\"") + 7, NULL) < 2000 && strstr(doc, "a aaaa…</text>"),
          "heatmap: a 5000-word title is cut with …, the document under 2000 px wide");
    free(doc);
    free(long_title);

    /* Cutting keeps combining marks with their letter: 30 "नि" (2 code points, 1 column)
     * fit; 50 are cut after 39 whole letters. */
    char deva[50 * 6 + 1] = "";
    for (int k = 0; k < 50; k++) strcat(deva, "नि");
    const char *deva_src[] = {deva};
    float one = 1;
    doc = heatmap_doc(NULL, deva_src, 1, deva_src, 1, &one);
    char want[39 * 6 + 16] = ">";
    for (int k = 0; k < 39; k++) strcat(want, "नि");
    strcat(want, "…</text>");
    CHECK(count(doc, want) == 2, "heatmap: a long Devanagari token is cut between letters, not inside one");
    free(doc);

    /* No tokens on a side: still a valid SVG, with a note. */
    doc = heatmap_doc("empty", src, 0, out, NO, NULL);
    why = xml_problem(doc);
    CHECK(!why && strstr(doc, "no source tokens"), "heatmap: no source tokens: valid SVG with a note");
    free(doc);
    doc = heatmap_doc(NULL, src, NS, out, 0, NULL);
    CHECK(!xml_problem(doc) && strstr(doc, "no output tokens"), "heatmap: no output tokens: valid SVG with a note");
    free(doc);

    Error err;
    CHECK(heatmap_write_svg("/nonexistent-dir/a.svg", "t", src, NS, out, NO, attn, &err) == -1 &&
              strstr(err.msg, "/nonexistent-dir/a.svg"),
          "heatmap_write_svg: an unwritable path fails, naming it");
    CHECK(heatmap_write_svg("/tmp/unused.svg", "t", src, 2, out, 2, NULL, &err) == -1 && strstr(err.msg, "unused.svg"),
          "heatmap_write_svg: tokens without weights fail");
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[512];
    snprintf(path, sizeof path, "%s/test_svg_%ld.svg", tmp, (long)getpid());
    CHECK(heatmap_write_svg(path, "t", src, NS, out, NO, attn, &err) == 0, "heatmap_write_svg: writes a file");
    FILE *f = fopen(path, "r");
    char head[8] = "";
    if (f) {
        CHECK(fread(head, 1, 4, f) == 4, "heatmap_write_svg: the file has content");
        fclose(f);
    }
    CHECK(!strncmp(head, "<svg", 4), "heatmap_write_svg: the file starts with <svg");
    remove(path);
}

/* ---------------------------------------------------------------- a classifier's row */

/* The horizontal extent of each <text> of font size `size` in doc, by svg_text_width's
 * (upper) estimate and its text-anchor: left[k], right[k] for the k-th; returns how
 * many (at most cap). */
static int text_extents(const char *doc, double size, double *left, double *right, int cap)
{
    int n = 0;
    for (const char *p = strstr(doc, "<text"); p && n < cap; p = strstr(p + 1, "<text")) {
        const char *end = strchr(p, '>'), *close = strstr(p, "</text>");
        const char *xa = strstr(p, " x=\""), *fs = strstr(p, " font-size=\"");
        if (!end || !close || !xa || !fs || xa > end || fs > end || strtod(fs + 12, NULL) != size) continue;
        char content[256];
        size_t len = (size_t)(close - end - 1) < sizeof content - 1 ? (size_t)(close - end - 1) : sizeof content - 1;
        memcpy(content, end + 1, len);
        content[len] = 0;
        double x = strtod(xa + 4, NULL), w = svg_text_width(content, size);
        const char *anchor = strstr(p, "text-anchor=\"");
        int middle = anchor && anchor < end && !strncmp(anchor + 13, "middle", 6);
        left[n] = middle ? x - w / 2 : x;
        right[n] = middle ? x + w / 2 : x + w;
        n++;
    }
    return n;
}

/* A classifier's --attention-svg: weights under one-letter words ran into each other
 * ("0.0550.203") and past the edge in the first version. Every word and every weight
 * must be clear of its neighbours and inside the picture. */
static void test_heatmap_row(void)
{
    const char *tok[] = {"a", ",", "i", "मी", "ok", "I", "extraordinarily"};
    const float w[] = {0.055f, 0.203f, 0.1f, 0.042f, 0.2f, 0.3f, 0.1f};
    enum { N = 7 };
    Mem m;
    heatmap_write_row_svg_to(mem_open(&m), "positive (0.9876)", tok, N, w);
    char *doc = mem_close(&m);
    const char *why = xml_problem(doc);
    CHECK(!why, "row: well-formed XML, finite numbers");
    CHECK(tokens_present(doc, tok, N), "row: every token is a <text>");
    CHECK(strstr(doc, ">0.055</text>") && strstr(doc, ">0.203</text>"), "row: the weights, three decimals");
    const char *wa = strstr(doc, " width=\"");
    double width = wa ? strtod(wa + 8, NULL) : 0;
    double left[16], right[16];
    for (int pass = 0; pass < 2; pass++) {
        /* The words at 14 px (the first text at 14 is the title, above the row), then
         * the weights at 10 px. */
        double size = pass ? 10 : 14;
        int n = text_extents(doc, size, left, right, 16), apart = 1, inside = 1;
        for (int k = 0; k < n; k++) {
            inside &= left[k] >= 0 && right[k] <= width;
            for (int l = k + 1; l < n; l++)
                if ((pass == 1 || k > 0) && left[l] < right[k] && left[k] < right[l]) apart = 0;
        }
        CHECK(n == (pass ? N : N + 1), pass ? "row: a weight per token" : "row: the title and a word per token");
        CHECK(apart, pass ? "row: no two weights overlap" : "row: no two words overlap");
        CHECK(inside, pass ? "row: every weight inside the picture" : "row: every word and the title inside the picture");
    }
    free(doc);
}

/* ---------------------------------------------------------------- plot */

static void check_axis(double lo, double hi, int target, double step, double alo, double ahi, int n,
                       const char *first_label, const char *what)
{
    PlotAxis a;
    char label[64] = "";
    int rc = plot_axis(lo, hi, target, &a);
    if (rc == 0) plot_axis_label(&a, 0, label, sizeof label);
    int ok = rc == 0 && fabs(a.step - step) < step * 1e-9 && fabs(a.lo - alo) < step * 1e-9 &&
             fabs(a.hi - ahi) < step * 1e-9 && a.n == n && !strcmp(label, first_label);
    CHECK(ok, what);
    if (!ok) fprintf(stderr, "    got step %g, %g .. %g, %d ticks, first \"%s\"\n", a.step, a.lo, a.hi, a.n, label);
}

static void test_axis(void)
{
    check_axis(0, 1, 5, 0.2, 0, 1, 6, "0.0", "axis [0, 1]: step 0.2, 0.0 .. 1.0");
    check_axis(0, 6.13, 5, 2, 0, 8, 5, "0", "axis [0, 6.13]: step 2, 0 .. 8");
    check_axis(0, 510, 8, 100, 0, 600, 7, "0", "axis [0, 510]: step 100, 0 .. 600");
    check_axis(2.13, 2.37, 5, 0.05, 2.1, 2.4, 7, "2.10", "axis [2.13, 2.37]: step 0.05, 2.10 .. 2.40");
    check_axis(-3, 7, 5, 2, -4, 8, 7, "-4", "axis [-3, 7]: step 2, -4 .. 8");
    check_axis(0, 20000, 8, 5000, 0, 20000, 5, "0", "axis [0, 20000]: step 5000, exact ends kept");
    check_axis(1e-4, 3e-4, 4, 5e-5, 1e-4, 3e-4, 5, "0.00010", "axis [1e-4, 3e-4]: step 5e-5, five decimals");
    check_axis(5, 5, 5, 0.2, 4.4, 5.6, 7, "4.4", "axis [5, 5]: widened around the value");
    check_axis(0, 0, 5, 0.5, -1, 1, 5, "-1.0", "axis [0, 0]: widened to [-1, 1]");
    check_axis(0, 0.6, 3, 0.2, 0, 0.6, 4, "0.0", "axis [0, 0.6]: 0.6 / 0.2 adds no tick");
    PlotAxis a;
    CHECK(plot_axis(NAN, 1, 5, &a) == -1 && plot_axis(0, INFINITY, 5, &a) == -1, "axis: non-finite ends refused");
    CHECK(plot_axis(2, 1, 5, &a) == -1, "axis: lo > hi refused");
    char label[32];
    plot_axis(-1, 1, 4, &a);
    int zero_ok = 0;
    for (int k = 0; k < a.n; k++) {
        plot_axis_label(&a, k, label, sizeof label);
        if (!strcmp(label, "0.0")) zero_ok = 1;
        if (!strcmp(label, "-0.0")) zero_ok = -100;
    }
    CHECK(zero_ok == 1, "axis: zero prints as 0.0, never -0.0");

    /* Invariants over many ranges: a 1-2-5 step, the data covered, a handful of ticks,
     * labels that read back as the ticks. */
    Rng rng;
    rng_seed(&rng, 5);
    int ok = 1;
    for (int t = 0; t < 2000 && ok; t++) {
        double scale = pow(10, (double)rng_below(&rng, 13) - 6);
        double lo = (rng_uniform(&rng) - 0.3) * scale, hi = lo + rng_uniform(&rng) * scale;
        int target = 2 + (int)rng_below(&rng, 8);
        if (plot_axis(lo, hi, target, &a)) { ok = 0; break; }
        double mant = a.step / pow(10, floor(log10(a.step) + 1e-9));
        ok &= fabs(mant - 1) < 1e-6 || fabs(mant - 2) < 1e-6 || fabs(mant - 5) < 1e-6;
        ok &= a.lo <= lo + a.step * 1e-6 && a.hi >= hi - a.step * 1e-6;
        ok &= a.n >= 2 && a.n <= target + 3;
        for (int k = 0; k < a.n; k++) {
            plot_axis_label(&a, k, label, sizeof label);
            ok &= fabs(strtod(label, NULL) - plot_axis_tick(&a, k)) <= a.step * 1e-6;
        }
        if (!ok) fprintf(stderr, "    [%g, %g] target %d: step %g, %g .. %g, %d ticks\n", lo, hi, target, a.step, a.lo,
                         a.hi, a.n);
    }
    CHECK(ok, "axis: 2000 random ranges: 1-2-5 steps, covering, 2 .. target+3 ticks, exact labels");
}

static const char sample_log[] =
    "{\"event\":\"start\",\"train_pairs\":270,\"valid_pairs\":30}\n"
    "{\"step\":10,\"epoch\":1,\"loss\":6.1,\"tokens_per_s\":100.0}\n"
    "\n"
    "not json at all\n"
    "{\"step\":20,\"epoch\":1,\"loss\":5.0}\n"
    "[1, 2, 3]\n"
    "{\"step\":30,\"epoch\":1}\n"
    "{\"event\":\"validation\",\"step\":34,\"valid_loss\":4.9,\"valid_bleu\":1.5,\"best\":true}\n"
    "{\"event\":\"epoch\",\"epoch\":2,\"step\":34}\n"
    "{\"step\":40,\"loss\":1e999}\n"
    "{\"event\":\"validation\",\"step\":50}\n"
    "{\"step\":50,\"loss\":4.0}\n"
    "{\"event\":\"validation\",\"step\":68,\"valid_loss\":4.5}\n"
    "{\"event\":\"lr_decay\",\"step\":68,\"learning_rate\":0.0005}\n"
    "{\"step\":60,\"loss\":3.5,\"tok";

static void test_train_log(void)
{
    FILE *f = fmemopen((void *)sample_log, sizeof sample_log - 1, "r");
    TrainCurves log;
    Error err;
    CHECK(f && train_curves_parse(f, "run/train.log", &log, &err) == 0, "train.log: parsed");
    if (f) fclose(f);
    CHECK(log.n_steps == 3, "train.log: 3 good step lines");
    CHECK(log.n_steps == 3 && log.step[2] == 50 && log.loss[2] == 4.0, "train.log: steps and losses in file order");
    CHECK(log.n_valid == 2 && log.n_bleu == 1, "train.log: 2 validations, 1 with BLEU");
    CHECK(log.n_valid == 2 && log.valid_bleu[0] == 1.5 && isnan(log.valid_bleu[1]) && log.valid_loss[1] == 4.5,
          "train.log: a validation without BLEU has NaN there");
    /* Lines 4 (not JSON), 6 (an array), 7 (no loss), 10 (loss not finite), 11 (a
     * validation without valid_loss), 15 (cut off). The blank line 3 is not counted. */
    CHECK(log.lines.n_malformed == 6 && log.lines.first_malformed == 4,
          "train.log: 6 malformed lines, the first is line 4");
    CHECK(log.lines.n_lines == 14, "train.log: 14 non-blank lines");
    char note[256];
    trainlog_describe_skipped(&log.lines, "run/train.log", note, sizeof note);
    CHECK(!strcmp(note, "run/train.log: skipped 6 malformed lines (the first is line 4)"),
          "train.log: the warning names the file and the first bad line");

    Mem m;
    plot_training_svg_to(mem_open(&m), &log, "Training: run & <co>");
    char *doc = mem_close(&m);
    const char *why = xml_problem(doc);
    CHECK(!why, "plot: well-formed XML, finite numbers");
    if (why) fprintf(stderr, "    %s\n", why);
    char *series = group(doc, "series");
    CHECK(count(series, "<polyline") == 3, "plot: three curves (training loss, validation loss, BLEU)");
    free(series);
    CHECK(strstr(doc, ">training loss</text>") && strstr(doc, ">validation loss</text>") &&
              strstr(doc, ">validation BLEU (right axis)</text>"),
          "plot: a legend entry per curve");
    CHECK(strstr(doc, ">Training: run &amp; &lt;co&gt;</text>") != NULL, "plot: the title, escaped");
    CHECK(strstr(doc, ">step</text>") && strstr(doc, ">loss per target token</text>") &&
              strstr(doc, ">validation BLEU</text>"),
          "plot: axis titles, the BLEU axis on the right");
    /* Loss 4.0 .. 6.1 in 6 intervals: step 0.5, 4.0 .. 6.5; steps 10 .. 68: ticks 0, 10, ..., 60. */
    CHECK(strstr(doc, ">6.5</text>") && strstr(doc, ">4.0</text>") && !strstr(doc, ">3.5</text>"),
          "plot: loss ticks 4.0 .. 6.5");
    CHECK(strstr(doc, ">60</text>") && !strstr(doc, ">70</text>"), "plot: the step axis ends at the last step");
    CHECK(!strstr(doc, "<g class=\"time\"") && strstr(doc, "height=\"480\""),
          "plot: no BLEU-against-time chart when no validation has its elapsed time");
    free(doc);
    train_curves_free(&log);

    /* Validations with BLEU and the run's clock: a second chart below, BLEU against
     * minutes; a validation without BLEU is not a point of it. */
    static const char timed[] =
        "{\"step\":10,\"loss\":5}\n"
        "{\"event\":\"validation\",\"step\":10,\"valid_loss\":5,\"valid_bleu\":2,\"elapsed\":60}\n"
        "{\"event\":\"validation\",\"step\":20,\"valid_loss\":4,\"elapsed\":150}\n"
        "{\"event\":\"validation\",\"step\":30,\"valid_loss\":3,\"valid_bleu\":9,\"elapsed\":240}\n";
    f = fmemopen((void *)timed, sizeof timed - 1, "r");
    CHECK(f && train_curves_parse(f, "t", &log, &err) == 0, "train.log with elapsed: parsed");
    if (f) fclose(f);
    CHECK(log.n_valid == 3 && log.n_timed == 2 && log.valid_elapsed[1] == 150,
          "train.log: each validation's elapsed; 2 with BLEU and time");
    plot_training_svg_to(mem_open(&m), &log, NULL);
    doc = mem_close(&m);
    CHECK(!xml_problem(doc), "plot with the time chart: well-formed");
    char *time = group(doc, "time");
    CHECK(time && count(time, "<polyline") == 1 && count(time, "<circle") == 2,
          "plot: BLEU against time, one curve through the 2 validations with BLEU");
    /* 1 .. 4 minutes in 8 intervals: 0.5-minute ticks from 1.0 to 4.0. */
    CHECK(time && strstr(time, ">minutes since training began (validations included)</text>") &&
              strstr(time, ">1.0</text>") && strstr(time, ">4.0</text>"),
          "plot: the time axis in minutes, 1.0 .. 4.0");
    CHECK(strstr(doc, "height=\"720\"") != NULL, "plot: the time chart adds 240 px");
    free(time);
    free(doc);
    train_curves_free(&log);

    /* A run of under three minutes: the time axis in seconds. */
    static const char quick[] =
        "{\"event\":\"validation\",\"step\":10,\"valid_loss\":5,\"valid_bleu\":2,\"elapsed\":20}\n"
        "{\"event\":\"validation\",\"step\":20,\"valid_loss\":4,\"valid_bleu\":5,\"elapsed\":170}\n";
    f = fmemopen((void *)quick, sizeof quick - 1, "r");
    CHECK(f && train_curves_parse(f, "q", &log, &err) == 0, "train.log of a short run: parsed");
    if (f) fclose(f);
    plot_training_svg_to(mem_open(&m), &log, NULL);
    doc = mem_close(&m);
    time = group(doc, "time");
    CHECK(strstr(time, ">seconds since training began (validations included)</text>") && strstr(time, ">150</text>"),
          "plot: a run of under three minutes has its time axis in seconds");
    free(time);
    free(doc);
    train_curves_free(&log);

    /* Without BLEU: two curves and no right axis. */
    static const char no_bleu[] = "{\"step\":1,\"loss\":2}\n{\"event\":\"validation\",\"step\":1,\"valid_loss\":3}\n";
    f = fmemopen((void *)no_bleu, sizeof no_bleu - 1, "r");
    train_curves_parse(f, "x", &log, &err);
    fclose(f);
    CHECK(log.lines.n_malformed == 0 && log.lines.first_malformed == 0,
          "train.log: a clean log has nothing skipped");
    trainlog_describe_skipped(&log.lines, "x", note, sizeof note);
    CHECK(note[0] == 0, "train.log: no warning for a clean log");
    plot_training_svg_to(mem_open(&m), &log, NULL);
    doc = mem_close(&m);
    CHECK(!xml_problem(doc), "plot without BLEU: well-formed");
    series = group(doc, "series");
    CHECK(count(series, "<polyline") == 2 && !strstr(doc, "BLEU"), "plot without BLEU: two curves, no BLEU axis");
    CHECK(count(series, "<circle") == 2, "plot: lone points get dots");
    free(series);
    free(doc);
    train_curves_free(&log);

    /* A classifier's run, as nmt train writes it: losses per example (line), and its
     * validation accuracy (a fraction in train.log) on the right axis in %. The first
     * version labelled the losses "per target token" and left the accuracy out. */
    static const char classifier[] =
        "{\"event\":\"start\",\"train_pairs\":1600,\"valid_pairs\":400,\"src_vocab\":900,\"tgt_vocab\":6,"
        "\"parameters\":1000,\"unigram_valid_loss\":0.69,\"classes\":2}\n"
        "{\"step\":10,\"epoch\":1,\"loss\":0.69}\n"
        "{\"event\":\"validation\",\"step\":25,\"epoch\":1,\"valid_loss\":0.60,\"valid_accuracy\":0.712500}\n"
        "{\"step\":30,\"epoch\":2,\"loss\":0.45}\n"
        "{\"event\":\"validation\",\"step\":50,\"epoch\":2,\"valid_loss\":0.48,\"valid_accuracy\":0.815500}\n";
    f = fmemopen((void *)classifier, sizeof classifier - 1, "r");
    CHECK(f && train_curves_parse(f, "c", &log, &err) == 0, "a classifier's train.log: parsed");
    if (f) fclose(f);
    CHECK(log.classes == 2 && log.n_accuracy == 2 && fabs(log.valid_accuracy[1] - 81.55) < 1e-9,
          "a classifier's train.log: 2 classes, 2 accuracies, in %");
    plot_training_svg_to(mem_open(&m), &log, NULL);
    doc = mem_close(&m);
    CHECK(!xml_problem(doc), "a classifier's plot: well-formed");
    series = group(doc, "series");
    CHECK(count(series, "<polyline") == 3, "a classifier's plot: three curves (with the validation accuracy)");
    free(series);
    CHECK(strstr(doc, ">loss per example (line)</text>") && !strstr(doc, "target token"),
          "a classifier's plot: the losses are per example, not per target token");
    CHECK(strstr(doc, ">validation accuracy (%)</text>") && strstr(doc, ">validation accuracy (right axis)</text>") &&
              !strstr(doc, "BLEU"),
          "a classifier's plot: the accuracy axis on the right, and its legend entry; no BLEU");
    CHECK(strstr(doc, ">80</text>") != NULL, "a classifier's plot: the accuracy axis in % (a tick at 80)");
    free(doc);
    train_curves_free(&log);

    /* A classifier's run without validation: only "classes" tells. */
    static const char unvalidated[] = "{\"event\":\"start\",\"classes\":3}\n{\"step\":10,\"loss\":1.1}\n";
    f = fmemopen((void *)unvalidated, sizeof unvalidated - 1, "r");
    train_curves_parse(f, "u", &log, &err);
    fclose(f);
    plot_training_svg_to(mem_open(&m), &log, NULL);
    doc = mem_close(&m);
    CHECK(strstr(doc, ">loss per example (line)</text>") != NULL,
          "a classifier's plot without validation: still per example (the start line's classes)");
    free(doc);
    train_curves_free(&log);
}

static void test_plot_files(void)
{
    Error err;
    char warning[ERROR_LEN];
    CHECK(plot_training("/nonexistent-run", NULL, warning, sizeof warning, &err) == -1 &&
              strstr(err.msg, "/nonexistent-run/train.log"),
          "plot_training: a missing run dir fails, naming train.log");
    char dir[] = "/tmp/test_svg_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    char logp[64], svgp[64], other[64];
    snprintf(logp, sizeof logp, "%s/train.log", dir);
    snprintf(svgp, sizeof svgp, "%s/training.svg", dir);
    snprintf(other, sizeof other, "%s/other.svg", dir);
    FILE *f = fopen(logp, "w");
    fclose(f);
    CHECK(plot_training(dir, NULL, warning, sizeof warning, &err) == -1 && strstr(err.msg, "train.log: empty"),
          "plot_training: an empty train.log fails, saying so");
    f = fopen(logp, "w");
    fputs("garbage\n{\"event\":\"start\"}\n", f);
    fclose(f);
    CHECK(plot_training(dir, NULL, warning, sizeof warning, &err) == -1 && strstr(err.msg, "no step or validation"),
          "plot_training: a log without steps fails");
    f = fopen(logp, "w");
    fputs(sample_log, f);
    fclose(f);
    CHECK(plot_training(dir, NULL, warning, sizeof warning, &err) == 0, "plot_training: writes RUN_DIR/training.svg");
    CHECK(strstr(warning, logp) && strstr(warning, "line 4"), "plot_training: warns about the skipped lines");
    struct stat st;
    CHECK(stat(svgp, &st) == 0 && st.st_size > 500, "plot_training: training.svg is there");
    CHECK(plot_training(dir, other, NULL, 0, &err) == 0 && stat(other, &st) == 0, "plot_training: -o FILE");
    remove(logp);
    remove(svgp);
    remove(other);
    rmdir(dir);
}

int main(void)
{
    test_escape();
    test_colour();
    test_writer();
    test_heatmap();
    test_heatmap_row();
    test_axis();
    test_train_log();
    test_plot_files();
    return check_report("test_svg");
}
