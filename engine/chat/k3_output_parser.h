// The Kimi K3 output parser ("kimi_k3" in OutputParserRegistry).
//
// The model writes an assistant turn the way Kimi-K3.jinja renders one:
//   [<|open|>think<|sep|> reasoning <|close|>think<|sep|>]
//   <|open|>response<|sep|> answer <|close|>response<|sep|>
//   [<|open|>tools<|sep|>
//      <|open|>call tool="NAME" index="N"<|sep|>
//         (<|open|>argument key="K" type="T"<|sep|> value <|close|>argument<|sep|>)*
//       | <|open|>json type="object"<|sep|> {...} <|close|>json<|sep|>
//      <|close|>call<|sep|> ...
//    <|close|>tools<|sep|>]
//   <|close|>message<|sep|><|end_of_msg|>
// A tag left open when the next channel opens is closed implicitly (with a warning). Control
// tokens never become text: any other tag out of place (a call without a tool name, an
// unknown or mismatched tag, a stray <|sep|>) is dropped with a warning, and an <|open|> or
// <|close|> that no <|sep|> completes loses its marker while the bytes after it stay text of
// the current channel. docs/chat-format.md has the full rules.
//
// Thread safety: see OutputParser.
#pragma once

#include <memory>

#include "kimi/output_parser.h"

namespace kimi::chat {

std::unique_ptr<OutputParser> MakeK3OutputParser(const OutputParserOptions& options);

}  // namespace kimi::chat
