// spm.cc — the C interface of spm.h over libsentencepiece's C++ API. Every exception
// and status stops here: nothing but plain C values crosses into nmt.
#include "spm.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
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

extern "C" int spm_train(const char *const *lines, long n, const char *model_type, int vocab_size, char **proto,
                         size_t *n_proto, char *why, size_t why_len)
{
    try {
        std::string args = "--model_type=" + std::string(model_type) + " --vocab_size=" + std::to_string(vocab_size) +
                           " --normalization_rule_name=identity --character_coverage=1.0"
                           " --hard_vocab_limit=false --minloglevel=2 --num_threads=1";
        Lines it(lines, n);
        std::string serialized;
        auto status = sentencepiece::SentencePieceTrainer::Train(args, &it, &serialized);
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

extern "C" char *spm_decode(const Spm *s, char *const *pieces, int n)
{
    try {
        std::vector<std::string> in(pieces, pieces + n);
        std::string text;
        if (!s->processor.Decode(in, &text).ok()) return nullptr;
        return copy_string(text);
    } catch (const std::exception &) {
        return nullptr;
    }
}
