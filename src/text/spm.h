/* spm.h — SentencePiece (Debian's libsentencepiece) from C: train a model on
 * sentences in memory, load one from its serialized bytes, turn text into pieces and
 * pieces back into text. spm.cc is the one C++ file of nmt; this header is all the
 * rest of nmt sees of it.
 *
 * nmt normalises text itself (text.h), so models trained here use SentencePiece's
 * "identity" normalisation; a model read from a user's .model file keeps its own.
 *
 * Example:
 *   const char *lines[] = {"the cat sat", "the dog ran"};
 *   char *proto; size_t n; char why[200];
 *   if (spm_train(lines, 2, "unigram", 100, &proto, &n, why, sizeof why)) ... why
 *   Spm *s = spm_load(proto, n, why, sizeof why);     // spm_piece_count(s) <= 100
 *   char **pieces; int k;
 *   spm_encode(s, "the cat", &pieces, &k);      // "▁the", "▁cat"
 *   char *text = spm_decode(s, pieces, k);     // "the cat"
 *   spm_pieces_free(pieces, k); free(text); spm_free(s); free(proto);
 */
#ifndef SPM_H
#define SPM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct Spm Spm;

/* Trains a model_type ("unigram" or "bpe") model of vocab_size pieces on the n lines
 * (a soft limit: fewer when the lines hold too few, SentencePiece's hard_vocab_limit
 * false; quietly, on one thread, so the same lines always give the same model), with
 * the comma-separated user_symbols (NULL or "": none) as its user_defined_symbols,
 * pieces it never cuts; *proto receives the serialized model (malloc'd, *n_proto
 * bytes). 0, or -1 with the library's message in why. */
int spm_train(const char *const *lines, long n, const char *model_type, int vocab_size, const char *user_symbols,
              char **proto, size_t *n_proto, char *why, size_t why_len);

/* A model from its serialized bytes (a .model file's contents), or NULL with why. */
Spm *spm_load(const void *proto, size_t n, char *why, size_t why_len);
void spm_free(Spm *s);

/* The model's pieces, its specials (<unk>, <s>, </s>) included. */
int spm_piece_count(const Spm *s);
/* The model type a serialized model records: "unigram", "bpe", "word" or "char"
 * ("unknown" for bytes that do not parse; never NULL). */
const char *spm_model_type(const void *proto, size_t n);

/* text (UTF-8) as the model's pieces: *pieces malloc'd, *n of them (spm_pieces_free).
 * 0, or -1 if the library refuses the text. */
int spm_encode(const Spm *s, const char *text, char ***pieces, int *n);
void spm_pieces_free(char **pieces, int n);
/* The text n pieces spell (malloc'd; "" for none), or NULL if the library refuses:
 * U+2581 read as a space, single spaces, none at either end, the model's "<unk>" "⁇"
 * (SentencePiece's way), and a piece the model does not know (a source piece copied
 * by --replace-unk) spelled as it is, its U+2581 read as spaces too. */
char *spm_decode(const Spm *s, char *const *pieces, int n);

#ifdef __cplusplus
}
#endif
#endif
