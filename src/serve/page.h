/* page.h — the page GET / serves: src/serve/page.html, in the binary as it is in the
 * source tree (page.c includes its bytes at build time), one self-contained document
 * (its style and script inline, no fonts, nothing fetched but this server's own
 * endpoints): a source box, the translation of each line as it comes, beam size and
 * n-best, the scores, and the attention heatmaps (per head and layer for a
 * Transformer), with a source word's weights shown under the pointer or the focus.
 */
#ifndef PAGE_H
#define PAGE_H

#include <stddef.h>

/* The page's bytes (UTF-8 HTML), serve_page_len of them. */
extern const char serve_page[];
extern const size_t serve_page_len;
#endif
