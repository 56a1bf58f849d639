/* page.c — page.html's bytes in the binary (page.h).
 *
 * The assembler's .incbin puts the file itself in read-only data, so the page stays
 * an ordinary HTML file to read and edit, with no generated C and no escaping. The
 * path is relative to the directory the compiler runs in: the repository root, where
 * make runs (the Makefile makes every object that holds the page depend on it).
 * GNU as and clang's integrated assembler both take it, on x86-64 and arm64 alike. A
 * NUL follows the bytes, not counted in serve_page_len.
 */
#include "serve/page.h"

__asm__(".pushsection .rodata\n"
        ".global serve_page\n"
        "serve_page:\n"
        ".incbin \"src/serve/page.html\"\n"
        "serve_page_end:\n"
        ".byte 0\n"
        ".balign 8\n"
        ".global serve_page_len\n"
        "serve_page_len:\n"
        ".quad serve_page_end - serve_page\n"
        ".popsection\n");
