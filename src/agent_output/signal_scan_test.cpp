// scan_signals against spec/state-machine.md §4: wire forms, the one-signal rule, fences,
// malformed tags, invalid UTF-8, long contexts and large outputs.

#include <board/agent_output.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>

using namespace board;

namespace Catch {
template <>
struct StringMaker<Signal> {
    static std::string convert(Signal s) { return std::string{to_string(s)}; }
};
}  // namespace Catch

namespace {

/// What a scan should give. Warnings are compared exactly: their wording is what the human
/// reads in the warning note.
struct Row {
    const char* what;
    std::string output;
    std::optional<Signal> signal;
    std::string context;
    std::vector<Signal> distinct;
    std::vector<std::string> warnings;
};

void check(const Row& row) {
    CAPTURE(row.what, row.output);
    const SignalScan scan = scan_signals(row.output);
    CHECK(scan.signal == row.signal);
    CHECK(scan.context == row.context);
    CHECK(scan.distinct == row.distinct);
    CHECK(scan.warnings == row.warnings);
}

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

TEST_CASE("every signal name is read, bare and with a context", "[signal]") {
    const Signal signal = GENERATE(Signal::complete,
                                   Signal::approval_needed,
                                   Signal::review_requested,
                                   Signal::content_review,
                                   Signal::input_needed,
                                   Signal::blocked,
                                   Signal::escalate,
                                   Signal::checkpoint,
                                   Signal::eject);
    const std::string context = GENERATE(as<std::string>{}, "", "see PROJ-3: the DB is down");
    const std::string name{to_string(signal)};
    const std::string tag =
        "<promise>" + name + (context.empty() ? "" : ": " + context) + "</promise>";
    check({"", "Work done.\n" + tag + "\n", signal, context, {signal}, {}});
}

TEST_CASE("wire forms: spacing, colons, lines and CONTENT REVIEW", "[signal]") {
    const Row row = GENERATE(values<Row>({
        {"CONTENT REVIEW with a space",
         "<promise>CONTENT REVIEW: launch copy</promise>",
         Signal::content_review,
         "launch copy",
         {Signal::content_review},
         {}},
        {"CONTENT REVIEW bare",
         "<promise>CONTENT REVIEW</promise>",
         Signal::content_review,
         "",
         {Signal::content_review},
         {}},
        {"blanks around the name and the context",
         "<promise>  CHECKPOINT \t:  step 1 done \n</promise>",
         Signal::checkpoint,
         "step 1 done",
         {Signal::checkpoint},
         {}},
        {"empty context after the colon",
         "<promise>APPROVAL_NEEDED:</promise>",
         Signal::approval_needed,
         "",
         {Signal::approval_needed},
         {}},
        {"multi-line context with colons",
         "<promise>INPUT_NEEDED: Which database?\nOptions: a: postgres\nb: sqlite\n</promise>",
         Signal::input_needed,
         "Which database?\nOptions: a: postgres\nb: sqlite",
         {Signal::input_needed},
         {}},
        {"a URL context keeps its colons",
         "<promise>REVIEW_REQUESTED: https://github.com/o/r/pull/7</promise>",
         Signal::review_requested,
         "https://github.com/o/r/pull/7",
         {Signal::review_requested},
         {}},
        {"inside a line of prose",
         "Done. <promise>COMPLETE: all green</promise> Bye.",
         Signal::complete,
         "all green",
         {Signal::complete},
         {}},
        {"CRLF line ends",
         "ok\r\n<promise>ESCALATE: disk full\r\nno space left\r\n</promise>\r\n",
         Signal::escalate,
         "disk full\r\nno space left",
         {Signal::escalate},
         {}},
        {"inline code is not a fence",
         "Say `<promise>EJECT</promise>`.",
         Signal::eject,
         "",
         {Signal::eject},
         {}},
        {"not tags: spaces inside the brackets",
         "< promise>COMPLETE</promise >",
         std::nullopt,
         "",
         {},
         {}},
        {"no output", "", std::nullopt, "", {}, {}},
        {"no signal", "I am still working on it.\n", std::nullopt, "", {}, {}},
    }));
    check(row);
}

TEST_CASE("the last handoff wins, COMPLETE only when there is none", "[signal]") {
    const Row row = GENERATE(values<Row>({
        {"a later handoff beats COMPLETE",
         "<promise>COMPLETE: done</promise>\n<promise>ESCALATE: wait</promise>",
         Signal::escalate,
         "wait",
         {Signal::complete, Signal::escalate},
         {}},
        {"an earlier handoff beats a later COMPLETE",
         "<promise>ESCALATE: wait</promise>\n<promise>COMPLETE: done</promise>",
         Signal::escalate,
         "wait",
         {Signal::escalate, Signal::complete},
         {}},
        {"of two handoffs the last counts",
         "<promise>CHECKPOINT: a</promise>\n<promise>INPUT_NEEDED: b</promise>",
         Signal::input_needed,
         "b",
         {Signal::checkpoint, Signal::input_needed},
         {}},
        {"the same handoff twice: the last context",
         "<promise>EJECT: first</promise><promise>EJECT: second</promise>",
         Signal::eject,
         "second",
         {Signal::eject},
         {}},
        {"COMPLETE twice: the last context",
         "<promise>COMPLETE: first</promise>\n<promise>COMPLETE: second</promise>",
         Signal::complete,
         "second",
         {Signal::complete},
         {}},
        {"several different: distinct in first-seen order",
         "<promise>BLOCKED: x</promise><promise>COMPLETE</promise>"
         "<promise>APPROVAL_NEEDED: y</promise><promise>BLOCKED: z</promise>",
         Signal::blocked,
         "z",
         {Signal::blocked, Signal::complete, Signal::approval_needed},
         {}},
        {"an unknown name does not hide a valid one",
         "<promise>FOO</promise>\n<promise>COMPLETE</promise>",
         Signal::complete,
         "",
         {Signal::complete},
         {R"(unknown signal "FOO" at line 1)"}},
    }));
    check(row);
}

TEST_CASE("malformed tags are skipped with a warning naming the line", "[signal]") {
    const Row row = GENERATE(values<Row>({
        {"nested tags",
         "<promise><promise>COMPLETE</promise></promise>",
         Signal::complete,
         "",
         {Signal::complete},
         {"unterminated <promise> at line 1 (another <promise> starts before its </promise>)",
          "stray </promise> at line 1"}},
        {"unterminated at the end",
         "one\ntwo\n<promise>COMPLETE: almost",
         std::nullopt,
         "",
         {},
         {"unterminated <promise> at line 3"}},
        {"unterminated, then a good tag",
         "<promise>COMPLETE\n\n<promise>EJECT: stop</promise>",
         Signal::eject,
         "stop",
         {Signal::eject},
         {"unterminated <promise> at line 1 (another <promise> starts before its </promise>)"}},
        {"stray closing tag",
         "</promise>\n<promise>COMPLETE</promise>",
         Signal::complete,
         "",
         {Signal::complete},
         {"stray </promise> at line 1"}},
        {"lowercase name",
         "\n<promise>complete</promise>",
         std::nullopt,
         "",
         {},
         {R"(unknown signal "complete" at line 2 (names are case-sensitive: COMPLETE))"}},
        {"mixed-case name",
         "<promise>Escalate: help</promise>",
         std::nullopt,
         "",
         {},
         {R"(unknown signal "Escalate" at line 1 (names are case-sensitive: ESCALATE))"}},
        {"unknown name",
         "a\nb\n<promise>FOO: bar</promise>",
         std::nullopt,
         "",
         {},
         {R"(unknown signal "FOO" at line 3)"}},
        {"underscore where the space form is meant, twice",
         "<promise>CONTENT  REVIEW</promise>",
         std::nullopt,
         "",
         {},
         {R"(unknown signal "CONTENT  REVIEW" at line 1)"}},
        {"a context without a colon",
         "<promise>COMPLETE all done</promise>",
         std::nullopt,
         "",
         {},
         {R"(unknown signal "COMPLETE all done" at line 1)"}},
        {"a name over two lines is quoted on one",
         "<promise>COMPLETE\nall done</promise>",
         std::nullopt,
         "",
         {},
         {R"(unknown signal "COMPLETE\nall done" at line 1)"}},
        {"empty tag", "<promise></promise>", std::nullopt, "", {}, {"empty <promise> at line 1"}},
        {"blank tag",
         "x\n<promise> \n </promise>",
         std::nullopt,
         "",
         {},
         {"empty <promise> at line 2"}},
        {"only a context",
         "<promise>: why</promise>",
         std::nullopt,
         "",
         {},
         {"empty <promise> at line 1"}},
    }));
    check(row);
}

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
