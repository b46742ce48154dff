#include "orchestrator/output_capture.hpp"

#include <board/agent_output.hpp>

#include <catch2/catch.hpp>

#include <string>

using board::orchestrator::OutputCapture;

namespace {

board::orchestrator::CapturedOutput capture_in_pieces(
    const std::string& text,
    std::size_t piece,
    board::DialectKind dialect = board::DialectKind::generic) {
    OutputCapture capture{board::make_output_reader(dialect, {})};
    for (std::size_t i = 0; i < text.size(); i += piece)
        capture.feed(std::string_view{text}.substr(i, piece));
    return capture.finish(0);
}

}  // namespace

TEST_CASE("the kept text gives the same signal scan as the whole output") {
    const std::string output = GENERATE(
        as<std::string>{},
        "working\nstill working\n<promise>COMPLETE</promise>\n",
        "```\n<promise>ESCALATE: quoted</promise>\n```\nreal work\n<promise>COMPLETE</promise>",
        "line\n<promise>INPUT_NEEDED: which one?\nsecond line of "
        "context\nthird</promise>\ntrailing\n",
        "~~~\nunclosed fence <promise>EJECT</promise>\nmore\n",
        "<promise>CHECKPOINT: a</promise> noise <promise>COMPLETE</promise>\n",
        "before\n<question>{\"question\": \"Which?\",\n \"type\": "
        "\"blocking\"}</question>\nafter\n",
        "<promise>unterminated\nno close here\n<promise>COMPLETE</promise>\n");
    const std::size_t piece = GENERATE(as<std::size_t>{}, 1, 3, 4096);
    const auto kept = capture_in_pieces(output, piece);
    const std::string& text = kept.report.message;
    CHECK(board::scan_signals(text).signal == board::scan_signals(output).signal);
    CHECK(board::scan_signals(text).context == board::scan_signals(output).context);
    CHECK(board::scan_questions(text).questions.size() ==
          board::scan_questions(output).questions.size());
    CHECK(kept.bytes == output.size());
}

TEST_CASE("memory stays bounded however much the agent prints") {
    OutputCapture capture;
    const std::string junk(1000, 'x');
    for (int i = 0; i < 50'000; ++i) {  // 50 MB of lines without a tag
        capture.feed(junk);
        capture.feed("\n");
    }
    capture.feed(std::string(3u << 20, 'y'));  // and a 3 MB line with no newline
    capture.feed("\n<promise>REVIEW_REQUESTED: https://example.test/pr/1</promise>\n");
    const auto out = capture.finish(0);
    CHECK(out.report.message.size() < 4096);
    CHECK(board::scan_signals(out.report.message).signal == board::Signal::review_requested);
    CHECK(out.bytes > 53'000'000);
}

TEST_CASE("Claude Code stream-json in pieces: the final message, cost and session") {
    const std::string output =
        R"({"type":"system","subtype":"init","session_id":"sess-42","tools":[]})"
        "\n"
        R"({"type":"user","message":{"content":[{"type":"tool_result","content":"<promise>EJECT</promise> quoted by a tool"}]}})"
        "\n"
        R"({"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Done.\n<promise>CHECKPOINT: step 1\nof 2</promise>"}]}})"
        "\n"
        R"({"type":"result","subtype":"success","total_cost_usd":0.125,"session_id":"sess-42","result":"Done.\n<promise>CHECKPOINT: step 1\nof 2</promise>"})"
        "\n";
    const auto out = capture_in_pieces(output, 7, board::DialectKind::claude);
    CHECK(out.report.session == "sess-42");
    REQUIRE(out.report.cost_usd.has_value());
    CHECK(*out.report.cost_usd == Approx(0.125));
    const auto scan = board::scan_signals(out.report.message);
    CHECK(scan.signal == board::Signal::checkpoint);  // not the tool's quoted EJECT
    CHECK(scan.context == "step 1\nof 2");
    CHECK(out.bytes == output.size());
}

TEST_CASE("garbage output is kept as text and never breaks the capture") {
    using namespace std::string_literals;
    const std::string garbage =
        "\xff\xfe{\"type\":\x01}\n\0\0binary\x80 <promise>COMPLETE</promise>\n"s;
    for (const auto dialect : {board::DialectKind::generic, board::DialectKind::claude}) {
        const auto out = capture_in_pieces(garbage, 2, dialect);
        CHECK_FALSE(out.report.cost_usd.has_value());
        if (dialect == board::DialectKind::generic)
            CHECK(board::scan_signals(out.report.message).signal == board::Signal::complete);
        else  // printed outside the JSON stream: not the agent's final message
            CHECK_FALSE(board::scan_signals(out.report.message).signal);
    }
}

TEST_CASE("the last line shown in the live view is the last non-blank one") {
    OutputCapture capture;
    capture.feed("first\nsecond line\n\n   \n");
    CHECK(capture.last_line() == "second line");
}
