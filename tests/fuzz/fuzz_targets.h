// The fuzz targets: one entry point per parser of untrusted input. Each takes any byte string,
// runs it through the code under test the way the appliance would, touches what a successful
// parse hands out (so a sanitizer sees a bad read), and returns whether the input was
// accepted. It must never crash, hang or leak, whatever the bytes.
//
// Each entry is used twice (tests/fuzz/CMakeLists.txt, kimi_add_fuzz_target): by a libFuzzer
// executable (libfuzzer_main.cc, clang, `make fuzz`) and by the standalone driver
// (fuzz_driver.h) that `make test` runs with any compiler. In a target's corpus folder,
// `good_*` files must be accepted and `bad_*` files refused; other files only must not crash.
//
// Thread safety: reentrant; state built once (a tokenizer, a policy) sits in function-local
// statics.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kimi::fuzz {

// A safetensors image, and the same bytes as config.json and model.safetensors.index.json
// (engine/io). True when the safetensors image parsed.
bool FuzzSafetensorsOnce(const uint8_t* data, size_t size);

// A chat-completions or completions body through the request gate (api::ParseRequest), the
// policy decision step under policies/examples/bank.json (for a teller and an operator), the
// K3 chat format render and the structured-output constraint the engine compiles for it. True
// when either endpoint accepted and the policy allowed it.
bool FuzzRequestOnce(const uint8_t* data, size_t size);

// A JSON Schema compiled to a grammar the way a request's response_format json_schema and a
// strict tool's parameters are (kimi::StructuredOutput), then a random walk of its token
// masks. True when it compiled.
bool FuzzSchemaOnce(const uint8_t* data, size_t size);

// The body of POST /admin/v1/session (http::ParseLoginBody), not the password check. True
// when the body named a username and a password.
bool FuzzLoginBodyOnce(const uint8_t* data, size_t size);

// A policy document: validation, parsing and compiling its redaction rules, then redaction
// of a fixed text. True when the policy was accepted.
bool FuzzPolicyOnce(const uint8_t* data, size_t size);

// A model.sig read from an untrusted model directory: the Sigstore bundle, the signature
// check against the test trust store, and the signed statement (both the bundle's payload
// and the bytes themselves as a payload). True when the bundle parsed.
bool FuzzOmsBundleOnce(const uint8_t* data, size_t size);

// A request as the server receives it: the head the server reads itself (ScanHead,
// ParseRequestHead) and a chunked body's strict framing check, whole and in pieces. True when
// the head was accepted (and a chunked body was complete and well framed).
bool FuzzHttpRequestOnce(const uint8_t* data, size_t size);

// An upstream's response body: chunked framing (lenient), the event stream, whole and in
// pieces, and the chunks normalised into the appliance's events, or one whole JSON answer.
// True when the answer finished.
bool FuzzUpstreamStreamOnce(const uint8_t* data, size_t size);

// A text under redaction (policy/redactor.h): read as the detectors read it, every category
// on, as a prompt and as content to store; the way back to the original keeps order and valid
// UTF-8 stays valid. True when something was found.
bool FuzzRedactionOnce(const uint8_t* data, size_t size);

}  // namespace kimi::fuzz
