// spm.cc — the C interface of spm.h over libsentencepiece's C++ API. Every exception
// and status stops here: nothing but plain C values crosses into nmt.
#include "text/spm.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

struct Spm {
    sentencepiece::SentencePieceProcessor processor;
};

namespace {

void say(char *why, size_t n, const std::string &what)
{
    if (why && n) std::snprintf(why, n, "%s", what.c_str());
}

char *copy_string(const std::string &s)
{
    char *out = static_cast<char *>(std::malloc(s.size() + 1));
    if (!out) return nullptr;
    std::memcpy(out, s.data(), s.size());
    out[s.size()] = '\0';
    return out;
}

// The lines, one at a time, as the trainer asks for them.
class Lines : public sentencepiece::SentenceIterator {
  public:
    Lines(const char *const *lines, long n) : lines_(lines), n_(n) { load(); }
    bool done() const override { return i_ >= n_; }
    void Next() override
    {
        i_++;
        load();
    }
    const std::string &value() const override { return value_; }
    sentencepiece::util::Status status() const override { return sentencepiece::util::Status(); }

  private:
    void load()
    {
        if (i_ < n_) value_ = lines_[i_];
    }
    const char *const *lines_;
    long n_, i_ = 0;
    std::string value_;
};

}  // namespace

extern "C" int spm_train(const char *const *lines, long n, const char *model_type, int vocab_size,
                         const char *user_symbols, char **proto, size_t *n_proto, char *why, size_t why_len)
{
    try {
        // The options as a map, not an argument string: Train(string) logs "Running
        // command: ..." on stderr before it reads --minloglevel. minloglevel 2 keeps the
        // trainer's progress (INFO) and warnings off stderr; its errors come back in the
        // status. One thread, so that the same lines give the same model every time (a
        // resumed run trains it again and compares the vocabularies).
        std::unordered_map<std::string, std::string> options = {
            {"model_type", model_type},
            {"vocab_size", std::to_string(vocab_size)},
            {"normalization_rule_name", "identity"},
            {"character_coverage", "1.0"},
            {"hard_vocab_limit", "false"},
            {"minloglevel", "2"},
            {"num_threads", "1"},
        };
        if (user_symbols && *user_symbols) options["user_defined_symbols"] = user_symbols;
        Lines it(lines, n);
        std::string serialized;
        auto status = sentencepiece::SentencePieceTrainer::Train(options, &it, &serialized);
        if (!status.ok()) {
            say(why, why_len, status.ToString());
            return -1;
        }
        *proto = static_cast<char *>(std::malloc(serialized.size() ? serialized.size() : 1));
        if (!*proto) throw std::bad_alloc();
        std::memcpy(*proto, serialized.data(), serialized.size());
        *n_proto = serialized.size();
        return 0;
    } catch (const std::exception &e) {
        say(why, why_len, e.what());
        return -1;
    }
}

extern "C" Spm *spm_load(const void *proto, size_t n, char *why, size_t why_len)
{
    try {
        std::unique_ptr<Spm> s(new Spm);
        auto status = s->processor.LoadFromSerializedProto(std::string(static_cast<const char *>(proto), n));
        if (!status.ok()) {
            say(why, why_len, status.ToString());
            return nullptr;
        }
        return s.release();
    } catch (const std::exception &e) {
        say(why, why_len, e.what());
        return nullptr;
    }
}

extern "C" void spm_free(Spm *s) { delete s; }

extern "C" int spm_encode(const Spm *s, const char *text, char ***pieces, int *n)
{
    *pieces = nullptr;
    *n = 0;
    try {
        std::vector<std::string> out;
        if (!s->processor.Encode(text, &out).ok()) return -1;
        char **p = static_cast<char **>(std::calloc(out.size() ? out.size() : 1, sizeof(char *)));
        if (!p) throw std::bad_alloc();
        for (size_t i = 0; i < out.size(); i++) {
            p[i] = copy_string(out[i]);
            if (!p[i]) {
                spm_pieces_free(p, static_cast<int>(i));
                throw std::bad_alloc();
            }
        }
        *pieces = p;
        *n = static_cast<int>(out.size());
        return 0;
    } catch (const std::exception &) {
        return -1;
    }
}

extern "C" void spm_pieces_free(char **pieces, int n)
{
    for (int i = 0; i < n; i++)
        std::free(pieces[i]);
    std::free(pieces);
}

extern "C" int spm_piece_count(const Spm *s) { return s->processor.GetPieceSize(); }

// The model type recorded in a serialized ModelProto: field 2 (trainer_spec, a
// message), inside it field 3 (model_type, an enum: 1 unigram, 2 bpe, 3 word, 4 char;
// unigram when absent). Read from the wire format directly: Debian's
// libsentencepiece-dev ships no sentencepiece_model.pb.h.
namespace {

bool varint(const unsigned char *&p, const unsigned char *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; p < end && shift < 64; shift += 7) {
        uint64_t b = *p++;
        *v |= (b & 0x7F) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}

// The field `want` of the message in [p, end): a varint's value in *value, or a
// length-delimited field's bytes in [*at, *at_end). Returns its wire type, -1 if the
// message has no such field, -2 if it does not parse.
int find_field(const unsigned char *p, const unsigned char *end, uint64_t want, uint64_t *value,
               const unsigned char **at, const unsigned char **at_end)
{
    int found = -1;
    while (p < end) {
        uint64_t key, v;
        if (!varint(p, end, &key)) return -2;
        int type = static_cast<int>(key & 7);
        if (type == 0) {
            if (!varint(p, end, &v)) return -2;
            if ((key >> 3) == want) *value = v, found = 0;
        } else if (type == 2) {
            if (!varint(p, end, &v) || v > static_cast<uint64_t>(end - p)) return -2;
            if ((key >> 3) == want) *at = p, *at_end = p + v, found = 2;
            p += v;
        } else if (type == 1 || type == 5) {
            size_t skip = type == 1 ? 8 : 4;
            if (skip > static_cast<size_t>(end - p)) return -2;
            p += skip;
        } else {
            return -2;
        }
    }
    return found;  // the last occurrence wins, as protobuf merges it
}

}  // namespace

extern "C" const char *spm_model_type(const void *proto, size_t n)
{
    const unsigned char *p = static_cast<const unsigned char *>(proto), *spec = p, *spec_end = p;
    uint64_t type = 1, unused;  // unigram: protobuf's default for an absent field
    int spec_found = find_field(p, p + n, 2, &unused, &spec, &spec_end);
    if (spec_found == -2 || spec_found == 0) return "unknown";
    if (spec_found == 2) {
        const unsigned char *unused_at, *unused_end;
        int type_found = find_field(spec, spec_end, 3, &type, &unused_at, &unused_end);
        if (type_found == -2 || type_found == 2) return "unknown";
    }
    static const char *const names[] = {"unigram", "bpe", "word", "char"};
    return type >= 1 && type <= 4 ? names[type - 1] : "unknown";
}

extern "C" char *spm_decode(const Spm *s, char *const *pieces, int n)
{
    try {
        // A piece the model does not know (a source piece copied by --replace-unk under
        // separate models) would come back as it is, its U+2581 still in it; it is read
        // as the pieces around it are, U+2581 as a space. The model's own unknown piece
        // ("<unk>") is left to the library, which writes it " ⁇ ". nmt's sentences have
        // single spaces between words (text.h), so runs of spaces (" ⁇ " beside a word's
        // space) are one, and there are none at either end.
        const std::string mark = "\xe2\x96\x81", unk = s->processor.IdToPiece(s->processor.unk_id());
        std::vector<std::string> in(pieces, pieces + n);
        for (auto &piece : in) {
            if (piece == unk || s->processor.PieceToId(piece) != s->processor.unk_id()) continue;
            for (size_t at; (at = piece.find(mark)) != std::string::npos;)
                piece.replace(at, mark.size(), " ");
        }
        std::string text;
        if (!s->processor.Decode(in, &text).ok()) return nullptr;
        std::string out;
        for (char c : text)
            if (c != ' ' || (!out.empty() && out.back() != ' ')) out += c;
        if (!out.empty() && out.back() == ' ') out.pop_back();
        return copy_string(out);
    } catch (const std::exception &) {
        return nullptr;
    }
}
