#!/usr/bin/python3
"""sacrebleu_reference.py — an independent Python re-implementation of sacreBLEU 2.x's
default BLEU and chrF2, and the script that writes the scoring fixtures in
tests/fixtures/score/.

THIS IS NOT sacreBLEU. sacreBLEU cannot be installed here (no PyPI access, no Debian
package), so the expected scores that tests/test_score.c and tests/test_cli_score.sh pin come
from this file: a second implementation, written from the definitions in sacreBLEU
2.x's source (tokenizers/tokenizer_13a.py, tokenizers/tokenizer_re.py,
metrics/bleu.py BLEU.compute_bleu and _compute_segment_statistics, metrics/chrf.py
CHRF._compute_f_score and _get_match_statistics, metrics/helpers.py, utils.py my_log,
compat.py sentence_bleu), in Python with the same regular expressions and the same
floating-point operations in the same order, so it should agree with sacreBLEU to the
last bit. It uses only the standard library; run it with /usr/bin/python3.

How it was checked (see `self-test`):
  1. Against numbers sacreBLEU itself printed, as published in its README and test
     suite (test/test_bleu.py, test/test_sentence_bleu.py, test/test_chrf.py). Those use
     two references per segment, beta 3 or eps smoothing, so this file implements those
     options too, only for the self-test.
  2. Against small cases worked by hand (the arithmetic is in the comments of
     HAND_CASES below and in tests/test_score.c).
It shares no code with src/eval/bleu.c; the C tests compare the two.

Usage:
  /usr/bin/python3 scripts/reference/sacrebleu_reference.py self-test
  /usr/bin/python3 scripts/reference/sacrebleu_reference.py score HYP REF [--sentence]
        prints what `nmt score REF -i HYP` prints (BLEU, chrF2, pairs, signatures)
  /usr/bin/python3 scripts/reference/sacrebleu_reference.py tokenize < LINES
        13a-tokenises each line (for comparing with the C tokeniser)
  /usr/bin/python3 scripts/reference/sacrebleu_reference.py fixtures
        rewrites tests/fixtures/score/expected.json and expected.txt from the committed
        hyp.txt / ref.txt and the hand-made cases below
  /usr/bin/python3 scripts/reference/sacrebleu_reference.py pairs NMT MODEL VALID_TSV
        remakes tests/fixtures/score/hyp.txt and ref.txt: the first 300 pairs of
        VALID_TSV, column 2 as references, column 1 translated by `NMT translate MODEL`

The committed hyp.txt / ref.txt were made with
  pairs ./nmt /work/main/runs/default/model.bin /work/main/runs/default/valid.tsv
(the default mar.txt model after 3 epochs, greedy: English -> Marathi; BLEU ~23).
"""

import json
import math
import os
import re
import subprocess
import sys
from collections import Counter

VERSION = "2.5.1"     # the sacreBLEU release whose definitions nmt follows (compat:)
MAX_NGRAM_ORDER = 4
CHAR_ORDER = 6
BETA = 2

# nmt's signatures: sacreBLEU's fields, but "compat:sacrebleu-X" where sacreBLEU has
# "version:X", since nmt, not that release, computed the score.
BLEU_SIGNATURE = f"nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|compat:sacrebleu-{VERSION}"
BLEU_SENTENCE_SIGNATURE = f"nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|compat:sacrebleu-{VERSION}"
CHRF_SIGNATURE = f"nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|compat:sacrebleu-{VERSION}"

# ============================================================================
# 13a tokenisation (tokenizer_13a.py + tokenizer_re.py)
# ============================================================================

_TOKENIZER_RE = [
    # every ASCII punctuation / symbol character except ' , - . (and the space)
    (re.compile(r'([\{-\~\[-\` -\&\(-\+\:-\@\/])'), r' \1 '),
    # period and comma unless preceded by a digit
    (re.compile(r'([^0-9])([\.,])'), r'\1 \2 '),
    # period and comma unless followed by a digit
    (re.compile(r'([\.,])([^0-9])'), r' \1 \2'),
    # dash when preceded by a digit
    (re.compile(r'([0-9])(-)'), r'\1 \2 '),
]


def tokenize_13a(line):
    """Tokenizer13a.__call__: the language-independent replacements, padding with one
    space on each side, the four regular expressions, then whitespace collapsed by
    str.split() (Python's Unicode notion of whitespace)."""
    line = line.replace('<skipped>', '')
    line = line.replace('-\n', '')
    line = line.replace('\n', ' ')
    line = line.replace('&quot;', '"')
    line = line.replace('&amp;', '&')
    line = line.replace('&lt;', '<')
    line = line.replace('&gt;', '>')
    line = f' {line} '
    for regex, repl in _TOKENIZER_RE:
        line = regex.sub(repl, line)
    return ' '.join(line.strip().split())


# ============================================================================
# BLEU (metrics/bleu.py, metrics/helpers.py, utils.py)
# ============================================================================

def my_log(num):
    """utils.my_log: log with log(0) floored."""
    if num == 0.0:
        return -9999999999
    return math.log(num)


def word_ngrams(line, max_order):
    """helpers.extract_all_word_ngrams: Counter of n-gram tuples n = 1..max_order, and
    the token count."""
    tokens = line.split()
    ngrams = []
    for n in range(1, max_order + 1):
        for i in range(0, len(tokens) - n + 1):
            ngrams.append(tuple(tokens[i:i + n]))
    return Counter(ngrams), len(tokens)


def tokenize_re(line):
    """TokenizerRegexp.__call__: the four regular expressions, whitespace collapsed."""
    for regex, repl in _TOKENIZER_RE:
        line = regex.sub(repl, line)
    return ' '.join(line.split())


# tokenizer_zh._UCODE_RANGES, as sacreBLEU writes them: '\u20000' is "\u2000" + "0" in
# Python, and so on; compared with one character these make U+2001..U+2A6D and
# U+2F81..U+2FA1 (bleu.c says the same and spells the ranges out; here Python's own
# comparison does it, as in sacreBLEU).
_ZH_RANGES = [
    ('\u3400', '\u4db5'), ('\u4e00', '\u9fa5'), ('\u9fa6', '\u9fbb'), ('\uf900', '\ufa2d'),
    ('\ufa30', '\ufa6a'), ('\ufa70', '\ufad9'), ('\u20000', '\u2a6d6'), ('\u2f800', '\u2fa1d'),
    ('\uff00', '\uffef'), ('\u2e80', '\u2eff'), ('\u3000', '\u303f'), ('\u31c0', '\u31ef'),
    ('\u2f00', '\u2fdf'), ('\u2ff0', '\u2fff'), ('\u3100', '\u312f'), ('\u31a0', '\u31bf'),
    ('\ufe10', '\ufe1f'), ('\ufe30', '\ufe4f'), ('\u2600', '\u26ff'), ('\u2700', '\u27bf'),
    ('\u3200', '\u32ff'), ('\u3300', '\u33ff'),
]


def tokenize_zh(line):
    """TokenizerZh.__call__: strip, spaces around each Chinese character, then
    TokenizerRegexp."""
    out = ""
    for char in line.strip():
        if any(start <= char <= end for start, end in _ZH_RANGES):
            out += " " + char + " "
        else:
            out += char
    return tokenize_re(out)


TOKENIZERS = {
    "13a": tokenize_13a,
    "zh": tokenize_zh,
    "char": lambda line: " ".join(x for x in line),     # TokenizerChar
    "none": lambda line: line,                          # TokenizerNone
}


def bleu_preprocess(sent, tokenize="13a", lowercase=False):
    """BLEU._preprocess_segment: lower() if asked, rstrip, then the tokenizer."""
    if lowercase:
        sent = sent.lower()
    return TOKENIZERS[tokenize](sent.rstrip())


def bleu_segment_stats(hyp, refs, max_order=MAX_NGRAM_ORDER, tokenize="13a", lowercase=False):
    """BLEU._extract_reference_info + _compute_segment_statistics for one segment:
    [hyp_len, ref_len, correct_1..max, total_1..max]. Several references: n-gram counts
    are the max over references, ref_len the closest length (shorter on ties)."""
    ref_ngrams, ref_lens = None, []
    for ref in refs:
        this, ref_len = word_ngrams(bleu_preprocess(ref, tokenize, lowercase), max_order)
        ref_lens.append(ref_len)
        if ref_ngrams is None:
            ref_ngrams = this
        else:
            for ngram, count in this.items():
                ref_ngrams[ngram] = max(ref_ngrams[ngram], count)
    hyp_ngrams, hyp_len = word_ngrams(bleu_preprocess(hyp, tokenize, lowercase), max_order)
    closest_diff, closest_len = -1, -1
    for ref_len in ref_lens:
        diff = abs(hyp_len - ref_len)
        if closest_diff == -1 or diff < closest_diff:
            closest_diff, closest_len = diff, ref_len
        elif diff == closest_diff and ref_len < closest_len:
            closest_len = ref_len
    correct = [0] * max_order
    total = [0] * max_order
    for ngram, count in hyp_ngrams.items():
        n = len(ngram) - 1
        total[n] += count
        if ngram in ref_ngrams:
            correct[n] += min(count, ref_ngrams[ngram])
    return [hyp_len, closest_len] + correct + total


def compute_bleu(correct, total, sys_len, ref_len, effective_order=False,
                 max_order=MAX_NGRAM_ORDER, smooth_method='exp'):
    """BLEU.compute_bleu for smooth_method 'exp' (the default) or 'none'. Returns a
    dict with score, precisions, bp, ratio, sys_len, ref_len, counts, totals."""
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    else:
        bp = 1.0
    precisions = [0.0 for _ in range(max_order)]
    result = {'counts': list(correct), 'totals': list(total), 'bp': bp,
              'sys_len': sys_len, 'ref_len': ref_len,
              'ratio': sys_len / ref_len if ref_len else 0}
    if not any(correct):     # early stop, sacreBLEU issue #141
        result.update(score=0.0, precisions=precisions)
        return result
    smooth_mteval = 1.
    eff_order = max_order
    for n in range(1, len(precisions) + 1):
        if total[n - 1] == 0:
            break
        if effective_order:
            eff_order = n
        if correct[n - 1] == 0:
            if smooth_method == 'exp':
                smooth_mteval *= 2
                precisions[n - 1] = 100. / (smooth_mteval * total[n - 1])
        else:
            precisions[n - 1] = 100. * correct[n - 1] / total[n - 1]
    score = bp * math.exp(sum([my_log(p) for p in precisions[:eff_order]]) / eff_order)
    result.update(score=score, precisions=precisions)
    return result


def bleu_from_stats(stats, effective_order=False, max_order=MAX_NGRAM_ORDER):
    return compute_bleu(stats[2:2 + max_order], stats[2 + max_order:],
                        int(stats[0]), int(stats[1]), effective_order, max_order)


def non_empty(refs):
    """The references of one segment without the "" ones (sacreBLEU's convention for a
    variable number of references). When all are "", sacreBLEU raises an error; here,
    as in nmt (see bleu.h), the segment is scored against a reference with no tokens,
    which is what sacreBLEU does for a whitespace-only reference."""
    kept = [r for r in refs if r is not None and r != ""]
    return kept or [""]


def corpus_bleu(hyps, ref_streams, max_order=MAX_NGRAM_ORDER):
    """sacrebleu.corpus_bleu(hyps, ref_streams) with its defaults."""
    stats = [0] * (2 + 2 * max_order)
    for hyp, *refs in zip(hyps, *ref_streams):
        refs = non_empty(refs)
        seg = bleu_segment_stats(hyp, refs, max_order)
        stats = [a + b for a, b in zip(stats, seg)]
    return bleu_from_stats(stats, False, max_order)


def sentence_bleu(hyp, refs):
    """sacrebleu.sentence_bleu(hyp, refs): exp smoothing, use_effective_order=True."""
    return bleu_from_stats(bleu_segment_stats(hyp, refs), effective_order=True)


# ============================================================================
# chrF (metrics/chrf.py, metrics/helpers.py)
# ============================================================================

def char_ngrams(line, max_order, include_whitespace=False):
    """helpers.extract_all_char_ngrams: whitespace removed (''.join(line.split())),
    then one Counter of code-point n-grams per order 1..max_order."""
    if not include_whitespace:
        line = ''.join(line.split())
    return [Counter([line[i:i + n] for i in range(len(line) - n + 1)])
            for n in range(1, max_order + 1)]


def chrf_match_stats(hyp_ngrams, ref_ngrams):
    """CHRF._get_match_statistics: [hyp count (0 if the reference has no n-grams of
    this order), ref count, clipped matches]."""
    match_count, hyp_count = 0, 0
    for ng, count in hyp_ngrams.items():
        hyp_count += count
        if ng in ref_ngrams:
            match_count += min(count, ref_ngrams[ng])
    return [hyp_count if ref_ngrams else 0, sum(ref_ngrams.values()), match_count]


def chrf_f_score(stats, beta=BETA, eps_smoothing=False):
    """CHRF._compute_f_score, same operations in the same order."""
    order = len(stats) // 3
    eps = 1e-16
    score = 0.0
    effective_order = 0
    factor = beta ** 2
    avg_prec, avg_rec = 0.0, 0.0
    for i in range(order):
        n_hyp, n_ref, n_match = stats[3 * i: 3 * i + 3]
        prec = n_match / n_hyp if n_hyp > 0 else eps
        rec = n_match / n_ref if n_ref > 0 else eps
        denom = factor * prec + rec
        score += ((1 + factor) * prec * rec / denom) if denom > 0 else eps
        if n_hyp > 0 and n_ref > 0:
            avg_prec += prec
            avg_rec += rec
            effective_order += 1
    if eps_smoothing:
        return 100 * score / order
    if effective_order == 0:
        avg_prec = avg_rec = 0.0
    else:
        avg_prec /= effective_order
        avg_rec /= effective_order
    if avg_prec + avg_rec:
        score = (1 + factor) * avg_prec * avg_rec
        score /= ((factor * avg_prec) + avg_rec)
        return 100 * score
    return 0.0


def chrf_segment_stats(hyp, refs, beta=BETA, eps_smoothing=False, order=CHAR_ORDER, lowercase=False):
    """CHRF._compute_segment_statistics: the statistics of the reference with the best
    f-score (the first on ties); CHRF._preprocess_segment lowercases first if asked."""
    if lowercase:
        hyp, refs = hyp.lower(), [r.lower() for r in refs]
    hyp_ngrams = char_ngrams(hyp, order)
    best_stats, best_f = [], -1.0
    for ref in refs:
        stats = []
        for h, r in zip(hyp_ngrams, char_ngrams(ref, order)):
            stats.extend(chrf_match_stats(h, r))
        f = chrf_f_score(stats, beta, eps_smoothing)
        if f > best_f:
            best_f, best_stats = f, stats
    return best_stats


def corpus_chrf(hyps, ref_streams, beta=BETA, eps_smoothing=False, order=CHAR_ORDER):
    stats = [0] * (3 * order)
    for hyp, *refs in zip(hyps, *ref_streams):
        refs = non_empty(refs)
        seg = chrf_segment_stats(hyp, refs, beta, eps_smoothing, order)
        stats = [a + b for a, b in zip(stats, seg)]
    return chrf_f_score(stats, beta, eps_smoothing), stats


def sentence_chrf(hyp, refs, beta=BETA, eps_smoothing=False):
    return chrf_f_score(chrf_segment_stats(hyp, refs, beta, eps_smoothing), beta, eps_smoothing)


# ============================================================================
# Self-test: numbers sacreBLEU printed, and hand-worked cases
# ============================================================================

# sacreBLEU's README ("Using SacreBLEU from Python") and test/test_bleu.py.
README_REFS = [
    ['The dog bit the man.', 'It was not unexpected.', 'The man bit him first.'],
    ['The dog had bit the man.', 'No one was surprised.', 'The man had bitten the dog.'],
]
README_SYS = ['The dog bit the man.', "It wasn't surprising.", 'The man had just bitten him.']

# (hyp, ref, expected) worked by hand; the arithmetic is in the comments.
HAND_CASES = [
    # 13a: "Hello , world !" (4) vs "Hello world !" (3). Matches: 1-grams Hello world !
    # 3/4; 2-grams "world !" 1/3; 3-grams 0/2 -> exp smoothing 100/(2*2) = 25;
    # 4-grams 0/1 -> 100/(4*1) = 25. bp 1. BLEU = (75 * 100/3 * 25 * 25)^(1/4)
    # = 1562500^(1/4) = sqrt(1250) = 35.35533905932738.
    ("Hello, world!", "Hello world!", "bleu", 35.35533905932738),
    # Corpus mode, 3-token hypothesis "a dog ran" vs "the dog ran away fast": no 4-gram,
    # p4 stays 0, log floored -> 0. Sentence mode (effective order 3): p = 200/3, 50,
    # 100/(2*1) = 50; bp = exp(1 - 5/3); BLEU = bp * (200/3 * 50 * 50)^(1/3)
    # = 0.513417119 * 55.0321208 = 28.254432923.
    ("a dog ran", "the dog ran away fast", "bleu", 0.0),
    ("a dog ran", "the dog ran away fast", "sentence_bleu", 28.254432923044856),
    # chrF2 "ab" vs "abc": order 1 P 2/2 R 2/3, order 2 P 1/1 R 1/2, order 3 has no
    # hypothesis n-gram (left out). P = 1, R = 7/12. F = 5PR/(4P+R) = (35/12)/(55/12)
    # = 7/11 -> 63.63636...
    ("ab", "abc", "chrf", 700 / 11),
    # "1,000.50 $." -> the comma and period sit between digits and stay; "$" and the
    # final "." split: "1,000.50 $ ." 3 tokens vs ref "1,000.50" 1 token: 1-gram 1/3,
    # no 2-gram match 0/2 -> 100/(2*2) = 25, 3-gram 0/1 -> 100/(4*1) = 25, no 4-grams:
    # corpus mode -> 0 (order 4 never reached); sentence mode: effective order 3,
    # bp 1: (100/3 * 25 * 25)^(1/3) = 20833.33^(1/3) = 27.516060407455...
    ("1,000.50 $.", "1,000.50", "sentence_bleu", (100 / 3 * 25 * 25) ** (1 / 3)),
]


def _close(got, want, tol):
    return abs(got - want) <= tol


def self_test():
    failures = []

    def check(what, ok):
        print(("  ok " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    # --- 13a tokeniser, cases whose result follows directly from the regexes.
    for line, want in [
        ("Hello, world!", "Hello , world !"),
        ("It costs 3.5 dollars, or 1,000 cents.", "It costs 3.5 dollars , or 1,000 cents ."),
        ("e.g.", "e . g ."),
        (".5", ". 5"),
        ("2-3 well-known x-", "2 - 3 well-known x-"),
        ("&quot;a&quot; &amp;quot;", "\" a \" & quot ;"),
        ("I'm a student.", "I'm a student ."),   # flexeval's test of sacreBLEU's 13a
    ]:
        check(f"13a {line!r} -> {want!r}", tokenize_13a(line) == want)

    # --- BLEU: numbers sacreBLEU printed (README; test/test_bleu.py EPSILON 1e-8).
    b = corpus_bleu(README_SYS, README_REFS)
    check(f"README corpus BLEU 48.530827 (got {b['score']:.8f})", _close(b['score'], 48.530827, 1e-6))
    line = (f"BLEU = {b['score']:.2f} " + "/".join(f"{p:.1f}" for p in b['precisions']) +
            f" (BP = {b['bp']:.3f} ratio = {b['ratio']:.3f} hyp_len = {b['sys_len']:d} ref_len = {b['ref_len']:d})")
    check("README verbose line: " + line,
          line == "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)")
    var_refs = [[''] + README_REFS[0][1:], README_REFS[1]]
    b = corpus_bleu(README_SYS, var_refs)
    line = (f"BLEU = {b['score']:.2f} " + "/".join(f"{p:.1f}" for p in b['precisions']) +
            f" (BP = {b['bp']:.3f} ratio = {b['ratio']:.3f} hyp_len = {b['sys_len']:d} ref_len = {b['ref_len']:d})")
    check("README variable-reference line: " + line,
          line == "BLEU = 29.44 82.4/42.9/27.3/12.5 (BP = 0.889 ratio = 0.895 hyp_len = 17 ref_len = 19)")
    check("empty hypotheses -> 0", corpus_bleu(['', '', ''], README_REFS)['score'] == 0.0)
    for order, want in [(1, "77.65"), (2, "60.50"), (3, "53.93"), (4, "48.53"), (5, "46.14"), (6, "43.28")]:
        got = f"{corpus_bleu(README_SYS, README_REFS, max_order=order)['score']:.2f}"
        check(f"README BLEU with max_ngram_order {order}: {want} (got {got})", got == want)
    s = bleu_segment_stats("am I am a character sequence", ["I am a symbol string sequence a a"])
    check(f"test_bleu statistics [4,2,1,0]/[6,5,4,3] (got {s[2:6]}/{s[6:]})",
          s[2:6] == [4, 2, 1, 0] and s[6:] == [6, 5, 4, 3])
    got = compute_bleu([9, 7, 5, 3], [10, 8, 6, 4], 11, 11, smooth_method='none')['score'] / 100
    check(f"test_bleu scoring 0.8375922397 (got {got:.10f})", _close(got, 0.8375922397, 1e-8))
    # test/test_sentence_bleu.py, issue #98 example, exp smoothing, 13a, effective order.
    got = sentence_bleu("Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;",
                        ["producţia de zahăr brut se exprimă în zahăr alb;"])['score']
    check(f"test_sentence_bleu #98 exp 8.493 (got {got:.5f})", _close(got, 8.493, 1e-3))
    got = sentence_bleu("this is a cat", ["okay thanks"])['score']
    check("test_sentence_bleu #141 zero -> 0", got == 0.0)

    # --- chrF: numbers sacreBLEU printed (README; test/test_chrf.py EPSILON 1e-4).
    got, _ = corpus_chrf(README_SYS, README_REFS)
    check(f"README chrF2 59.73 (got {got:.4f})", f"{got:.2f}" == "59.73")
    for hyps, refs, want in [
        (["abcdefg"], ["hijklmnop"], 0.0), (["a"], ["b"], 0.0), ([""], ["b"], 0.0),
        ([""], ["ref"], 0.0), ([""], ["reference"], 0.0), (["aa"], ["ab"], 8.3333),
        (["a", "b"], ["a", "c"], 8.3333), (["a"], ["a"], 16.6667), (["a b c"], ["a b c"], 50.0),
        (["a b c"], ["abc"], 50.0),
        ([" risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists ."],
         ["risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists ."], 63.361730),
        ([" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "],
         ["Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."], 64.1302698),
        (["Niemand hat die Absicht, eine Mauer zu errichten"], ["Niemand hat die Absicht, eine Mauer zu errichten"], 100.0),
    ]:
        got, _ = corpus_chrf(hyps, [refs], beta=3, eps_smoothing=True)
        check(f"test_chrf eps beta 3 {hyps[0][:20]!r}: {want} (got {got:.6f})", _close(got, want, 1e-4))
    for hyps, refs, want in [
        (["a"], ["a"], 100.0), ([""], ["reference"], 0.0), (["a b c"], ["a b c"], 100.0),
        (["a b c"], ["abc"], 100.0), ([""], ["c"], 0.0), (["a", "b"], ["a", "c"], 50.0),
        (["aa"], ["ab"], 25.0),
    ]:
        got, _ = corpus_chrf(hyps, [refs], beta=3)
        check(f"test_chrf effective order beta 3 {hyps!r}: {want} (got {got:.6f})", _close(got, want, 1e-4))
    for hyp, ref, want in [
        ('Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.',
         'Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře.', 39.14078509),
        ('Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři.',
         'A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři.', 31.22557079),
        ('Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.',
         'Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli.', 57.15704367),
    ]:
        got = sentence_chrf(hyp, [ref], eps_smoothing=True)
        check(f"test_chrf sentence eps {hyp[:20]!r}: {want} (got {got:.6f})", _close(got, want, 1e-4))

    # --- Hand-worked cases.
    for hyp, ref, what, want in HAND_CASES:
        if what == "bleu":
            got = corpus_bleu([hyp], [[ref]])['score']
        elif what == "sentence_bleu":
            got = sentence_bleu(hyp, [ref])['score']
        else:
            got = sentence_chrf(hyp, [ref])
        check(f"hand {what} {hyp!r} / {ref!r}: {want:.12f} (got {got:.12f})", _close(got, want, 1e-9))

    print(f"self-test: {len(failures)} failed")
    return 1 if failures else 0


# ============================================================================
# Fixtures
# ============================================================================

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE_DIR = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir, "tests", "fixtures", "score"))

# Hand-made edge cases: (name, hypothesis, reference). Single-reference, as nmt scores.
# None of the references is "" (sacreBLEU refuses an empty reference).
EDGE_CASES = [
    ("identical", "The cat sat on the mat.", "The cat sat on the mat."),
    ("empty hypothesis", "", "The cat sat on the mat."),
    ("whitespace-only hypothesis", " \t ", "The cat sat."),
    ("whitespace-only reference", "The cat sat.", "   "),
    ("no 4-gram matches", "the cat sat on a mat today", "a cat sat on the mat today"),
    ("no matches at all", "alpha beta gamma delta", "one two three four"),
    ("hypothesis longer than the reference", "the cat sat on the mat and then it sat on the dog", "the cat sat on the mat"),
    ("hypothesis shorter than 4 tokens", "the cat", "the cat sat on the mat"),
    ("clipped repeats", "the the the the the the", "the cat is on the mat"),
    ("punctuation only", "?!.,;", "...!"),
    ("punctuation only, reference words", "!!! ???", "Yes!"),
    ("case matters", "THE CAT SAT ON THE MAT", "the cat sat on the mat"),
    ("numbers with separators", "It costs 1,000.50 dollars, or 3.5% of 10,000.", "It costs 1,000.50 dollars or 3.5 % of 10,000 ."),
    ("numbers at the edges", "3. .5 5, ,5 1990-2000 -5 a-1 5- 2-", "3 . . 5 5 , , 5 1990 - 2000 -5 a-1 5 - 2 -"),
    ("abbreviations", "e.g. U.S.A. Mr. Smith a.b 1.a a.1", "e.g. USA Mr Smith"),
    ("HTML entities and skipped", "&quot;Yes&quot; &amp; &lt;no&gt; &amp;quot; a<skipped>b", "\"Yes\" & <no> \"quoted\" ab"),
    ("ASCII symbols", "$5 (hi) [a] {b} a/b a\\b a|b ~x ^y `z` @me #tag *s* +1 =2 _u_", "$ 5 ( hi ) a / b"),
    ("apostrophes and hyphens", "don't 'quoted' well-known e-mail -dash- --", "do not \"quoted\" well known email dash"),
    ("non-ASCII punctuation", "“Hello,” she said — «bonjour»… ¿Qué? ¡Sí! 「你好」。", "\"Hello,\" she said - \"bonjour\"... Que? Si! 你好."),
    ("Devanagari with danda and digits", "तो म्हणाला, “१०,००० रुपये.” ठीक आहे।", "तो म्हणाला की १०,००० रुपये ठीक आहेत."),
    ("Devanagari combining marks", "नमस्ते मित्रा", "नमस्कार मित्र"),
    ("Unicode spaces", "a\u00a0b\u2009c\u3000d\u0085e\u2028f g\u200bh", "a b c d e f g h"),
    ("ASCII separators and CR", "a\x1cb\x1dc\x1ed\x1fe\rf\x0bg\x0ch", "a b c d e f g h"),
    ("tabs and runs of spaces", "  the\t\tcat   sat\t", "the cat sat"),
    ("trailing no-break space", "the cat sat.\u00a0", "the cat sat."),
    ("astral plane characters", "I 😀 it 😀😀 𝐀𝐁", "I 😀 it 😀 𝐀𝐁𝐂"),
    ("NFC vs NFD", "caf\u00e9 cr\u00e8me", "cafe\u0301 cre\u0300me"),
    ("long repeated sentence", " ".join(["a b c d"] * 50), " ".join(["a b c d e"] * 40)),
    ("single character", "a", "a"),
    ("single character mismatch", "a", "b"),
    ("reference shorter than six characters", "abcdefgh", "abc"),
    ("newline hyphenation (API only)", "hy-\nphen two\nlines", "hyphen two lines"),
]


def bleu_dict(b):
    return {
        "score": b['score'], "precisions": b['precisions'], "bp": b['bp'], "ratio": b['ratio'],
        "hyp_len": b['sys_len'], "ref_len": b['ref_len'], "counts": b['counts'], "totals": b['totals'],
    }


def score_pair(hyp, ref):
    """Everything the fixture pins for one pair."""
    seg = bleu_segment_stats(hyp, [ref])
    chrf_stats = chrf_segment_stats(hyp, [ref])
    return {
        "tok_hyp": bleu_preprocess(hyp),
        "tok_ref": bleu_preprocess(ref),
        "bleu": bleu_dict(bleu_from_stats(seg)),
        "sentence_bleu": bleu_dict(bleu_from_stats(seg, effective_order=True)),
        "chrf": chrf_f_score(chrf_stats),
        "chrf_stats": chrf_stats,
    }


# Cases for the options nmt score offers besides the defaults (--tokenize, -lc):
# (name, tokenize, lowercase, hypothesis, reference).
OPTION_CASES = [
    ("zh: characters are words", "zh", False, "我爱你。", "我爱你！"),
    ("zh: Latin words, numbers and CJK commas", "zh", False, "我有3.5个苹果, OK.", "我有 3.5 个苹果，OK。"),
    ("zh: curly quotes and dashes count as Chinese (the U+2001..U+2A6D range)", "zh", False,
     "他说“好”——然后走了…", "他说“好”—然后走了"),
    ("zh: no padding, a final comma after a digit stays", "zh", False, "价格是5,", "价格是5 ,"),
    ("zh: Extension B is not in the ranges", "zh", False, "𠀀𠀁好", "𠀀 𠀁 好"),
    ("13a on Chinese: one word a sentence", "13a", False, "我爱你。", "我爱你！"),
    ("char: every character", "char", False, "日本語のテキスト", "日本語 テキスト"),
    ("char: Latin text too", "char", False, "the cat sat", "a cat sat"),
    ("none: the text's own spaces", "none", False, "low@@ er is he@@ re .", "low@@ er is here ."),
    ("none: no punctuation split", "none", False, "hello, world!", "hello , world !"),
    ("lc: 13a lowercased", "13a", True, "The Cat SAT on THE mat.", "the cat sat on the mat."),
    ("lc: final sigma", "13a", True, "ΟΔΟΣ ΣΑΣ ΑΣΑ Σ.", "οδος σας ασα σ."),
    ("lc: final sigma before an apostrophe and after a mark", "13a", True, "ΟΔΟΣ' ΟΔΌΣ", "οδος' οδός"),
    ("lc: dotted capital I", "13a", True, "İSTANBUL İzmir", "i̇stanbul izmir"),
    ("lc: sharp s stays", "13a", True, "STRASSE Straße", "strasse straße"),
    ("lc: zh lowercased", "zh", True, "我爱Paris。", "我爱paris。"),
    ("lc: char lowercased", "char", True, "ABC", "abd"),
]


def option_case(name, tokenize, lowercase, hyp, ref):
    seg = bleu_segment_stats(hyp, [ref], tokenize=tokenize, lowercase=lowercase)
    chrf_stats = chrf_segment_stats(hyp, [ref], lowercase=lowercase)
    return {"name": name, "tokenize": tokenize, "lowercase": lowercase, "hyp": hyp, "ref": ref,
            # the words BLEU counts (char's own output has runs of spaces; split() drops them)
            "tok_hyp": " ".join(bleu_preprocess(hyp, tokenize, lowercase).split()),
            "tok_ref": " ".join(bleu_preprocess(ref, tokenize, lowercase).split()),
            "bleu": bleu_dict(bleu_from_stats(seg)),
            "sentence_bleu": bleu_dict(bleu_from_stats(seg, effective_order=True)),
            "chrf": chrf_f_score(chrf_stats), "chrf_stats": chrf_stats}


def read_lines(path):
    """Lines as nmt score reads them: split on '\\n' only, a final line without a
    newline still counts. (sacreBLEU's CLI also rstrip()s each line; neither metric
    sees trailing whitespace, so the scores are the same.)"""
    with open(path, encoding="utf-8", newline="\n") as f:
        text = f.read()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def corpus_scores(hyps, refs):
    b = corpus_bleu(hyps, [refs])
    chrf, chrf_stats = corpus_chrf(hyps, [refs])
    return b, chrf, chrf_stats


def score_text(hyps, refs, sentence=False):
    """What `nmt score` prints: the lines `nmt eval` prints, without the loss."""
    out = []
    if sentence:
        for i, (h, r) in enumerate(zip(hyps, refs), 1):
            s = sentence_bleu(h, [r])
            out.append(f"{i}\tBLEU = {s['score']:.2f} " + "/".join(f"{p:.1f}" for p in s['precisions']) +
                       f" (BP = {s['bp']:.3f} ratio = {s['ratio']:.3f} hyp_len = {s['sys_len']:d} ref_len = {s['ref_len']:d})"
                       f"\tchrF2 = {sentence_chrf(h, [r]):.2f}")
    b, chrf, _ = corpus_scores(hyps, refs)
    out.append(f"BLEU = {b['score']:.2f} " + "/".join(f"{p:.1f}" for p in b['precisions']) +
               f" (BP = {b['bp']:.3f} ratio = {b['ratio']:.3f} hyp_len = {b['sys_len']:d} ref_len = {b['ref_len']:d})")
    out.append(f"chrF2 = {chrf:.2f}")
    out.append(f"pairs = {len(hyps)}")
    out.append(f"BLEU signature: {BLEU_SIGNATURE}")
    if sentence:
        out.append(f"sentence BLEU signature: {BLEU_SENTENCE_SIGNATURE}")
    out.append(f"chrF signature: {CHRF_SIGNATURE}")
    return "\n".join(out) + "\n"


def compact_json(value, indent=0):
    """JSON with one line per small object or list (floats as Python's shortest
    round-trip repr, so the C side's strtod gets the same double back)."""
    flat = json.dumps(value, ensure_ascii=False)
    if len(flat) + indent <= 110 or not isinstance(value, (dict, list)):
        return flat
    pad = " " * (indent + 1)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k)}: {compact_json(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + compact_json(v, indent + 1) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def write_fixtures():
    hyp_path = os.path.join(FIXTURE_DIR, "hyp.txt")
    ref_path = os.path.join(FIXTURE_DIR, "ref.txt")
    hyps, refs = read_lines(hyp_path), read_lines(ref_path)
    assert len(hyps) == len(refs), "hyp.txt and ref.txt differ in length"
    b, chrf, chrf_stats = corpus_scores(hyps, refs)
    cases = []
    for name, hyp, ref in EDGE_CASES:
        c = {"name": name, "hyp": hyp, "ref": ref}
        c.update(score_pair(hyp, ref))
        cases.append(c)
    eb, echrf, echrf_stats = corpus_scores([c[1] for c in EDGE_CASES], [c[2] for c in EDGE_CASES])
    fixture = {
        "about": ("Expected sacreBLEU 2.x default scores computed by scripts/reference/sacrebleu_reference.py, "
                  "an independent re-implementation checked against numbers sacreBLEU published and "
                  "by hand; NOT computed by running sacreBLEU. Regenerate with: "
                  "/usr/bin/python3 scripts/reference/sacrebleu_reference.py fixtures"),
        "bleu_signature": BLEU_SIGNATURE,
        "chrf_signature": CHRF_SIGNATURE,
        "real": {
            "hyp": "tests/fixtures/score/hyp.txt",
            "ref": "tests/fixtures/score/ref.txt",
            "pairs": len(hyps),
            "bleu": bleu_dict(b),
            "chrf": chrf,
            "chrf_stats": chrf_stats,
            # [line, sentence BLEU, sentence chrF2] for every pair
            "sentences": [
                [i, sentence_bleu(h, [r])['score'], sentence_chrf(h, [r])]
                for i, (h, r) in enumerate(zip(hyps, refs), 1)
            ],
        },
        "cases": cases,
        "cases_corpus": {"bleu": bleu_dict(eb), "chrf": echrf, "chrf_stats": echrf_stats},
        "option_cases": [option_case(*c) for c in OPTION_CASES],
    }
    with open(os.path.join(FIXTURE_DIR, "expected.json"), "w", encoding="utf-8") as f:
        f.write(compact_json(fixture) + "\n")
    with open(os.path.join(FIXTURE_DIR, "expected.txt"), "w", encoding="utf-8") as f:
        f.write(score_text(hyps, refs))
    with open(os.path.join(FIXTURE_DIR, "expected_sentence.txt"), "w", encoding="utf-8") as f:
        f.write(score_text(hyps, refs, sentence=True))
    print(f"wrote {FIXTURE_DIR}/expected.json, expected.txt, expected_sentence.txt: "
          f"{len(hyps)} pairs, BLEU {b['score']:.4f}, chrF2 {chrf:.4f}; {len(cases)} edge cases")


def make_pairs(nmt, model, valid_tsv, n=300):
    with open(valid_tsv, encoding="utf-8") as f:
        pairs = [line.rstrip("\n").split("\t") for line in f][:n]
    src = "".join(p[0] + "\n" for p in pairs)
    out = subprocess.run([nmt, "translate", model, "--batch", "50"], input=src.encode(),
                         stdout=subprocess.PIPE, check=True).stdout.decode("utf-8")
    os.makedirs(FIXTURE_DIR, exist_ok=True)
    with open(os.path.join(FIXTURE_DIR, "hyp.txt"), "w", encoding="utf-8") as f:
        f.write(out)
    with open(os.path.join(FIXTURE_DIR, "ref.txt"), "w", encoding="utf-8") as f:
        f.write("".join(p[1] + "\n" for p in pairs))


def main(argv):
    sys.stdout.reconfigure(encoding="utf-8")
    if len(argv) >= 2 and argv[1] == "self-test":
        return self_test()
    if len(argv) >= 4 and argv[1] == "score":
        sys.stdout.write(score_text(read_lines(argv[2]), read_lines(argv[3]), "--sentence" in argv[4:]))
        return 0
    if len(argv) == 2 and argv[1] == "tokenize":
        text = sys.stdin.buffer.read().decode("utf-8")
        for line in text.split("\n")[:-1]:
            sys.stdout.write(tokenize_13a(line) + "\n")
        return 0
    if len(argv) == 2 and argv[1] == "fixtures":
        write_fixtures()
        return 0
    if len(argv) == 5 and argv[1] == "pairs":
        make_pairs(argv[2], argv[3], argv[4])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
