// Tests scan_signals on fences, invalid UTF-8, long contexts, warning caps and large outputs.

#include "agent_output/signal_scan_test_support.hpp"

#include <board/agent_output.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

using namespace board;
using namespace board::signal_scan_test;

namespace {

/// Independent of the implementation's decoder: a strict UTF-8 check (Unicode table 3-7).
bool valid_utf8(std::string_view s) {
    struct Lead {
        std::uint8_t first, last;  // lead byte range
        std::uint8_t tail;         // continuation bytes
        std::uint8_t lo, hi;       // range of the first continuation byte
    };

    constexpr std::array<Lead, 8> leads{{{0xC2, 0xDF, 1, 0x80, 0xBF},
                                         {0xE0, 0xE0, 2, 0xA0, 0xBF},
                                         {0xE1, 0xEC, 2, 0x80, 0xBF},
                                         {0xED, 0xED, 2, 0x80, 0x9F},
                                         {0xEE, 0xEF, 2, 0x80, 0xBF},
                                         {0xF0, 0xF0, 3, 0x90, 0xBF},
                                         {0xF1, 0xF3, 3, 0x80, 0xBF},
                                         {0xF4, 0xF4, 3, 0x80, 0x8F}}};
    const auto at = [&](std::size_t i) { return static_cast<std::uint8_t>(s[i]); };
    for (std::size_t i = 0; i < s.size();) {
        if (at(i) < 0x80) {
            ++i;
            continue;
        }
        const auto* lead = std::find_if(leads.begin(), leads.end(), [&](const Lead& l) {
            return at(i) >= l.first && at(i) <= l.last;
        });
        if (lead == leads.end() || i + lead->tail >= s.size()) return false;
        if (at(i + 1) < lead->lo || at(i + 1) > lead->hi) return false;
        for (std::size_t k = 2; k <= lead->tail; ++k) {
            if (at(i + k) < 0x80 || at(i + k) > 0xBF) return false;
        }
        i += lead->tail + 1;
    }
    return true;
}

/// About `bytes` of typical agent output: prose, inline code, a closed fenced block with
/// C++ in it, a diff, and HTML-ish `<` characters, but no signal.
std::string typical_output(std::size_t bytes) {
    const std::string chunk =
        "I read `src/uploader.cpp` and the retry loop in `upload_chunk()`; the backoff is\n"
        "computed with `std::chrono` and capped at 30 s. Next I will add a test for <500>\n"
        "responses and check that the `<retry>` element in config.xml is honoured.\n"
        "```cpp\n"
        "template <class T> std::vector<T> retry(std::function<T()> f, int n) {\n"
        "    for (int i = 0; i < n; ++i) { if (auto r = f()) return {*r}; }\n"
        "    return {};\n"
        "}\n"
        "```\n"
        "- [x] read the code\n"
        "- [ ] write the test: a <b>bold</b> claim, 3 < 4 and 5 > 2\n"
        "@@ -10,7 +10,9 @@ void Uploader::run() {\n"
        "-    send(chunk);\n"
        "+    with_retry([&] { return send(chunk); });\n"
        "\n";
    std::string out;
    out.reserve(bytes + chunk.size());
    while (out.size() < bytes) out += chunk;
    return out;
}

}  // namespace

TEST_CASE("tags inside fenced code are ignored", "[signal][fence]") {
    const Row row = GENERATE(values<Row>({
        {"backtick fence",
         "```\n<promise>ESCALATE: quoted</promise>\n```\n<promise>COMPLETE</promise>",
         Signal::complete,
         "",
         {Signal::complete},
         {}},
        {"tilde fence",
         "~~~\n<promise>ESCALATE: quoted</promise>\n~~~\n<promise>COMPLETE</promise>",
         Signal::complete,
         "",
         {Signal::complete},
         {}},
        {"fence with an info string",
         "```markdown\n<promise>ESCALATE</promise>\n```\n",
         std::nullopt,
         "",
         {},
         {}},
        {"fence indented by 3 spaces",
         "   ```\n<promise>ESCALATE</promise>\n   ```\n<promise>COMPLETE</promise>",
         Signal::complete,
         "",
         {Signal::complete},
         {}},
        {"4 spaces is not a fence",
         "    ```\n<promise>ESCALATE</promise>\n    ```\n",
         Signal::escalate,
         "",
         {Signal::escalate},
         {}},
        {"unclosed fence: the rest is fenced",
         "<promise>CHECKPOINT: a</promise>\n```\n<promise>ESCALATE</promise>\n",
         Signal::checkpoint,
         "a",
         {Signal::checkpoint},
         {}},
        {"tildes do not close backticks",
         "```\n~~~\n<promise>ESCALATE</promise>\n```\n<promise>COMPLETE</promise>",
         Signal::complete,
         "",
         {Signal::complete},
         {}},
        {"a shorter fence does not close",
         "````\n```\n<promise>ESCALATE</promise>\n````\n<promise>COMPLETE</promise>",
         Signal::complete,
         "",
         {Signal::complete},
         {}},
        {"a longer fence closes",
         "```\n<promise>ESCALATE</promise>\n`````\n<promise>COMPLETE</promise>",
         Signal::complete,
         "",
         {Signal::complete},
         {}},
        {"a fence line with text after it does not close",
         "```\n```text\n<promise>ESCALATE</promise>\n```\n<promise>COMPLETE</promise>",
         Signal::complete,
         "",
         {Signal::complete},
         {}},
        {"backticks in the info string: inline code, not a fence",
         "```<promise>ESCALATE: inline</promise>```\n",
         Signal::escalate,
         "inline",
         {Signal::escalate},
         {}},
        {"a tag on the opening fence line is fenced",
         "```<promise>ESCALATE</promise>\n```\n",
         std::nullopt,
         "",
         {},
         {}},
        {"tilde info strings may hold backticks",
         "~~~ `x`\n<promise>ESCALATE</promise>\n~~~\n",
         std::nullopt,
         "",
         {},
         {}},
        {"fence marks mid-line are text",
         "see ```\n<promise>COMPLETE</promise>",
         Signal::complete,
         "",
         {Signal::complete},
         {}},
        {"CRLF fences",
         "```\r\n<promise>ESCALATE</promise>\r\n```\r\n<promise>COMPLETE</promise>\r\n",
         Signal::complete,
         "",
         {Signal::complete},
         {}},
        {"malformed tags in a fence are not warned about",
         "```\n<promise>\n</promise>\n<promise>nope</promise>\n```\n",
         std::nullopt,
         "",
         {},
         {}},
        {"several fences",
         "```\n<promise>EJECT</promise>\n```\ntext\n~~~\n<promise>EJECT</promise>\n~~~\n"
         "<promise>CHECKPOINT: real</promise>\n```\n<promise>EJECT</promise>\n```",
         Signal::checkpoint,
         "real",
         {Signal::checkpoint},
         {}},
        {"a fence inside a well-formed tag is context",
         "<promise>CHECKPOINT: ran\n```\nmake test\n```\n</promise>",
         Signal::checkpoint,
         "ran\n```\nmake test\n```",
         {Signal::checkpoint},
         {}},
        {"after an unterminated tag, fences still hide quotes",
         "<promise>COMPLETE\n```\n<promise>ESCALATE: quoted</promise>\n```\n"
         "<promise>CHECKPOINT: real</promise>",
         Signal::checkpoint,
         "real",
         {Signal::checkpoint},
         {"unterminated <promise> at line 1 (another <promise> starts before its </promise>)"}},
        {"a fence as the last line",
         "<promise>COMPLETE</promise>\n```",
         Signal::complete,
         "",
         {Signal::complete},
         {}},
    }));
    check(row);
}

TEST_CASE("invalid UTF-8 never breaks the scan and never reaches the context", "[signal][utf8]") {
    const std::string fffd = "\xEF\xBF\xBD";
    const Row row = GENERATE_COPY(values<Row>({
        {"invalid bytes around the tag",
         "\xff\xfe<promise>COMPLETE: ok</promise>\xc3",
         Signal::complete,
         "ok",
         {Signal::complete},
         {}},
        {"a stray byte in the context",
         "<promise>ESCALATE: bad \xff byte</promise>",
         Signal::escalate,
         "bad " + fffd + " byte",
         {Signal::escalate},
         {}},
        {"a cut 3-byte sequence is one replacement per byte",
         "<promise>ESCALATE: a \xe2\x82 b</promise>",
         Signal::escalate,
         "a " + fffd + fffd + " b",
         {Signal::escalate},
         {}},
        {"an overlong encoding",
         "<promise>ESCALATE: \xc0\xaf</promise>",
         Signal::escalate,
         fffd + fffd,
         {Signal::escalate},
         {}},
        {"an encoded surrogate",
         "<promise>ESCALATE: \xed\xa0\x80</promise>",
         Signal::escalate,
         fffd + fffd + fffd,
         {Signal::escalate},
         {}},
        {"above U+10FFFF",
         "<promise>ESCALATE: \xf4\x90\x80\x80</promise>",
         Signal::escalate,
         fffd + fffd + fffd + fffd,
         {Signal::escalate},
         {}},
        {"a cut sequence at the end of the context",
         "<promise>EJECT: x\xf0\x9f\x9a</promise>",
         Signal::eject,
         "x" + fffd + fffd + fffd,
         {Signal::eject},
         {}},
        {"valid multi-byte text is kept",
         "<promise>EJECT: naïve — 日本 🚀</promise>",
         Signal::eject,
         "naïve — 日本 🚀",
         {Signal::eject},
         {}},
        {"invalid bytes in the name are quoted as U+FFFD",
         "<promise>COMP\xffLETE</promise>",
         std::nullopt,
         "",
         {},
         {"unknown signal \"COMP" + fffd + "LETE\" at line 1"}},
        {"an invalid byte inside the opening tag: not a tag",
         "<prom\xffise>COMPLETE</promise>",
         std::nullopt,
         "",
         {},
         {"stray </promise> at line 1"}},
    }));
    check(row);
    CHECK(valid_utf8(scan_signals(row.output).context));
}

TEST_CASE("a long context is cut at a code point with a marker", "[signal]") {
    struct Long {
        std::string context;
        std::string kept;
    };

    const std::string limit(max_signal_context_bytes, 'a');
    constexpr std::size_t huge = 10'000'000;
    const Long row = GENERATE_COPY(values<Long>({
        {limit, limit},
        {limit + "b", limit + std::string{truncation_marker}},
        {limit.substr(1) + "é", limit.substr(1) + std::string{truncation_marker}},
        {limit.substr(4) + "🚀", limit.substr(4) + "🚀"},
        {limit.substr(3) + "🚀", limit.substr(3) + std::string{truncation_marker}},
        {limit.substr(3) + "\xff", limit.substr(3) + "\xEF\xBF\xBD"},  // U+FFFD just fits
        {limit.substr(2) + "\xff", limit.substr(2) + std::string{truncation_marker}},
        {std::string(huge, 'c'),
         std::string(max_signal_context_bytes, 'c') + std::string{truncation_marker}},
    }));
    const SignalScan scan = scan_signals("<promise>INPUT_NEEDED: " + row.context + "</promise>");
    CHECK(scan.signal == Signal::input_needed);
    CHECK(scan.context.size() == row.kept.size());
    CHECK(scan.context == row.kept);
}

TEST_CASE("warnings are capped", "[signal]") {
    struct Flood {
        std::string unit;
        std::size_t count;
        std::string first;
    };

    const Flood flood = GENERATE(values<Flood>({
        {"<promise>FOO</promise>\n", 30, R"(unknown signal "FOO" at line 1)"},
        {"<promise>",
         200'000,
         "unterminated <promise> at line 1 (another <promise> starts "
         "before its </promise>)"},
        {"</promise>", 200'000, "stray </promise> at line 1"},
    }));
    std::string output;
    for (std::size_t i = 0; i < flood.count; ++i) output += flood.unit;
    const SignalScan scan = scan_signals(output);
    CHECK_FALSE(scan.signal);
    REQUIRE(scan.warnings.size() == max_scan_warnings + 1);
    CHECK(scan.warnings.front() == flood.first);
    CHECK(scan.warnings.back() ==
          "... and " + std::to_string(flood.count - max_scan_warnings) + " more warnings");
}

TEST_CASE("a 10 MB output with the signal at the very end", "[signal][large]") {
    const std::string tail = GENERATE(as<std::string>{},
                                      "<promise>APPROVAL_NEEDED: deploy to prod</promise>",
                                      "<promise>APPROVAL_NEEDED: deploy to prod</promise>\n");
    const std::string output = typical_output(10'000'000) + tail;
    const SignalScan scan = scan_signals(output);
    CHECK(scan.signal == Signal::approval_needed);
    CHECK(scan.context == "deploy to prod");
    CHECK(scan.warnings.empty());

    // The same tag quoted in an unclosed fence at the end is ignored.
    const SignalScan fenced = scan_signals(typical_output(10'000'000) + "```\n" + tail);
    CHECK_FALSE(fenced.signal);
}

TEST_CASE("random mixtures of tag pieces never crash and stay valid UTF-8", "[signal][fuzz]") {
    const std::vector<std::string> pieces = {"<promise>",
                                             "</promise>",
                                             "COMPLETE",
                                             "ESCALATE",
                                             ": ",
                                             "\n",
                                             "```",
                                             "~~~",
                                             "   ",
                                             "\xff",
                                             "\xe2\x82",
                                             "x",
                                             "<",
                                             "CONTENT REVIEW"};
    std::mt19937 random{GENERATE(1U, 2U, 3U, 4U, 5U)};
    for (int round = 0; round < 200; ++round) {
        std::string output;
        const std::size_t length = random() % 60;
        for (std::size_t i = 0; i < length; ++i) output += pieces[random() % pieces.size()];
        CAPTURE(output);
        const SignalScan scan = scan_signals(output);
        CHECK(valid_utf8(scan.context));
        for (const auto& w : scan.warnings) CHECK(valid_utf8(w));
        CHECK(scan.warnings.size() <= max_scan_warnings + 1);
        CHECK(scan.signal.has_value() == !scan.distinct.empty());
    }
}
