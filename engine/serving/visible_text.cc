#include "serving/visible_text.h"

#include <string_view>

namespace kimi::serving {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

void DropReplacements(std::string* text, size_t from) {
  for (size_t at = text->find(kReplacement, from); at != std::string::npos; at = text->find(kReplacement, at)) {
    text->erase(at, kReplacement.size());
  }
}

class VisibleTextStream : public TokenTextStream {
 public:
  explicit VisibleTextStream(const Tokenizer& tokenizer) : tokenizer_(tokenizer), decoder_(tokenizer) {}

  Status Push(int32_t id, std::string* text) override {
    if (tokenizer_.IsSpecial(id)) {
      // Bytes still waiting can no longer complete a character: they are dropped, so a
      // character never spans a channel boundary.
      std::string dropped;
      decoder_.Flush(&dropped);
      return Status::OK();
    }
    const size_t from = text->size();
    KIMI_RETURN_IF_ERROR(decoder_.Push(id, text));
    DropReplacements(text, from);
    return Status::OK();
  }
  void Flush(std::string* text) override {
    const size_t from = text->size();
    decoder_.Flush(text);
    DropReplacements(text, from);
  }

 private:
  Tokenizer tokenizer_;
  StreamDecoder decoder_;
};

class VisibleText : public Detokenizer {
 public:
  explicit VisibleText(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
  std::unique_ptr<TokenTextStream> NewStream() const override {
    return std::make_unique<VisibleTextStream>(tokenizer_);
  }

 private:
  Tokenizer tokenizer_;
};

}  // namespace

std::shared_ptr<Detokenizer> VisibleTextDetokenizer(const Tokenizer& tokenizer) {
  return std::make_shared<VisibleText>(tokenizer);
}

}  // namespace kimi::serving
