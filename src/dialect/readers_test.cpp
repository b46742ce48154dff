#include <board/agent_dialect.hpp>
#include <board/agent_output.hpp>

#include <catch2/catch.hpp>

#include <string>

using namespace board;

namespace {

AgentReport read_lines(DialectKind kind,
                       const std::vector<std::string>& lines,
                       int exit_code = 0,
                       std::string_view prompt = {}) {
    auto reader = make_output_reader(kind, prompt);
    for (const auto& line : lines) reader->line(line);
    return reader->finish(exit_code);
}

std::optional<Signal> signal_of(const AgentReport& r) {
    return scan_signals(r.message).signal;
}

}  // namespace

TEST_CASE("claude: the signal comes from the final message, not tool results or the prompt") {
    const auto r = read_lines(
        DialectKind::claude,
        {
            R"j({"type":"system","subtype":"init","session_id":"5b0e","tools":["Write"]})j",
            R"j({"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Reading <promise>EJECT: from the protocol</promise>"}]}})j",
            R"j({"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Write","input":{}}]}})j",
            R"j({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"<promise>ESCALATE: quoted</promise>"}]}})j",
            R"j({"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"Written.\n<promise>COMPLETE</promise>"}]}})j",
            R"j({"type":"result","subtype":"success","is_error":false,"result":"Written.\n<promise>COMPLETE</promise>","session_id":"5b0e","total_cost_usd":0.0421,"usage":{"input_tokens":310,"cache_creation_input_tokens":2000,"cache_read_input_tokens":15000,"output_tokens":95}})j",
        });
    CHECK(signal_of(r) == Signal::complete);
    CHECK(scan_signals(r.message).distinct.size() == 1);
    CHECK(r.session == "5b0e");
    CHECK(r.cost_usd == Approx(0.0421));
    CHECK(r.tokens == TokenUsage{310, 95, 15000, 2000});
    CHECK(r.error.empty());
    CHECK_FALSE(r.failed_in_output);
}

TEST_CASE("claude: a result cut inside an emoji (a lone surrogate escape) is still read") {
    // Node cuts a string between the two halves of an emoji and escapes the half it keeps;
    // an escaped backslash before a `u` and a whole pair stay as they are.
    const auto r = read_lines(
        DialectKind::claude,
        {
            R"j({"type":"system","subtype":"init","session_id":"5b0f","tools":[]})j",
            R"j({"type":"result","subtype":"success","is_error":false,"result":"Done \ud83d, C:\\udir \ud83d\ude00\n<promise>COMPLETE</promise>","session_id":"5b0f","total_cost_usd":0.01})j",
        });
    CHECK(signal_of(r) == Signal::complete);
    CHECK(r.session == "5b0f");
    CHECK(r.cost_usd == Approx(0.01));
    CHECK(r.message.find("Done \xEF\xBF\xBD, C:\\udir \xF0\x9F\x98\x80") != std::string::npos);
}

TEST_CASE("claude: an error result is the run's error, even with exit 0") {
    const auto r = read_lines(
        DialectKind::claude,
        {R"j({"type":"system","subtype":"init","session_id":"s"})j",
         R"j({"type":"result","subtype":"success","is_error":true,"result":"API Error: Unable to connect to API (ConnectionRefused)","session_id":"s","total_cost_usd":0})j"},
        1);
    CHECK(r.failed_in_output);
    CHECK(r.error == "API Error: Unable to connect to API (ConnectionRefused)");
    CHECK(r.retry == Retry::helps);
    CHECK_FALSE(signal_of(r));
}

TEST_CASE("claude: a usage error printed before any JSON is the error, and permanent") {
    const auto r = read_lines(DialectKind::claude, {"error: unknown option '--frobnicate'", ""}, 1);
    CHECK(r.error == "error: unknown option '--frobnicate'");
    CHECK(r.retry == Retry::futile);
}

TEST_CASE("claude: a run cut short says why in errors") {
    const auto r = read_lines(
        DialectKind::claude,
        {R"j({"type":"result","subtype":"error_max_turns","duration_ms":840,"is_error":true,"num_turns":2,"stop_reason":"tool_use","session_id":"s","total_cost_usd":0.5,"usage":{"input_tokens":200,"output_tokens":14},"permission_denials":[],"terminal_reason":"max_turns","errors":["Reached maximum number of turns (1)"]})j"},
        1);
    CHECK(r.failed_in_output);
    CHECK(r.error == "Reached maximum number of turns (1)");
    CHECK(r.retry == Retry::helps);
    CHECK(r.cost_usd == 0.5);
}

TEST_CASE("claude: a refused key is permanent, by its status") {
    // Claude Code 2.1.197 against a server answering 401, CLAUDE_CODE_MAX_RETRIES=0.
    const auto r = read_lines(
        DialectKind::claude,
        {R"j({"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":523,"error_status":401,"error":"authentication_failed","session_id":"s"})j",
         R"j({"type":"assistant","message":{"id":"x","content":[{"type":"text","text":"Invalid API key · Fix external API key"}]},"error":"authentication_failed","session_id":"s"})j",
         R"j({"type":"result","subtype":"success","is_error":true,"api_error_status":401,"duration_ms":1700,"num_turns":1,"result":"Invalid API key · Fix external API key","session_id":"s","total_cost_usd":0})j"},
        1);
    CHECK(r.error == "Invalid API key · Fix external API key");
    CHECK(r.retry == Retry::futile);
    CHECK_FALSE(signal_of(r));
}

TEST_CASE("codex: the last agent message, thread id and tokens") {
    const auto r = read_lines(
        DialectKind::codex,
        {
            "User instructions: <promise>EJECT: reason</promise>",
            R"j({"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"})j",
            R"j({"type":"turn.started"})j",
            R"j({"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Let me look. <promise>ESCALATE: not yet</promise>"}})j",
            R"j({"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","status":"in_progress"}})j",
            R"j({"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"<promise>EJECT</promise>\n","exit_code":0,"status":"completed"}})j",
            R"j({"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Plan written.\n<promise>COMPLETE</promise>"}})j",
            R"j({"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}})j",
        });
    CHECK(signal_of(r) == Signal::complete);
    CHECK(r.session == "0199a213-81c0-7800-8aa1-bbab2a035a53");
    CHECK(r.tokens == TokenUsage{24763, 122, 24448, 0});
    CHECK_FALSE(r.cost_usd);
}

TEST_CASE("codex: a failed turn is the error") {
    const auto r = read_lines(
        DialectKind::codex,
        {R"j({"type":"thread.started","thread_id":"t"})j",
         R"j({"type":"error","message":"Reconnecting... 1/1"})j",
         R"j({"type":"turn.failed","error":{"message":"stream disconnected before completion: error sending request for url (http://127.0.0.1:9/v1/responses)"}})j"},
        1);
    CHECK(r.failed_in_output);
    CHECK(r.error.starts_with("stream disconnected before completion"));
    CHECK(r.retry == Retry::helps);
}

TEST_CASE("gemini: assistant chunks after the last tool call are the final message") {
    const auto r = read_lines(
        DialectKind::gemini,
        {
            R"j({"type":"init","session_id":"g-1","model":"gemini-2.5-pro"})j",
            R"j({"type":"message","role":"user","content":"<promise>EJECT</promise>"})j",
            R"j({"type":"message","role":"assistant","content":"Checking <promise>ESCALATE</promise>","delta":true})j",
            R"j({"type":"tool_use","tool_name":"write_file","tool_id":"w1","parameters":{}})j",
            R"j({"type":"tool_result","tool_id":"w1","status":"success"})j",
            R"j({"type":"message","role":"assistant","content":"Done.\n<promise>COM","delta":true})j",
            R"j({"type":"message","role":"assistant","content":"PLETE</promise>","delta":true})j",
            R"j({"type":"result","status":"success","stats":{"total_tokens":300,"input_tokens":250,"output_tokens":50,"cached":10}})j",
        });
    CHECK(signal_of(r) == Signal::complete);
    CHECK(r.session == "g-1");
    CHECK(r.tokens == TokenUsage{250, 50, 10, 0});
}

TEST_CASE("generic: output that repeats the prompt yields no signal and no question") {
    const std::string prompt =
        "You are the research agent.\n\n## When you finish\n\n```\n"
        "<promise>COMPLETE</promise>\n<promise>EJECT: reason</promise>\n```\n"
        "Or ask:\n<question>{\"question\": \"Which database?\"}</question>\n"
        "A blocking question stops the ticket.\n";
    SECTION("an echo, then the agent's own words") {
        std::vector<std::string> lines;
        std::string_view rest = prompt;
        while (!rest.empty()) {
            const auto nl = rest.find('\n');
            lines.emplace_back(rest.substr(0, nl));
            rest.remove_prefix(nl + 1);
        }
        lines.emplace_back("working...");
        lines.emplace_back("<promise>COMPLETE</promise>");
        const auto r = read_lines(DialectKind::generic, lines, 0, prompt);
        CHECK(signal_of(r) == Signal::complete);
        CHECK(scan_questions(r.message).questions.empty());
        CHECK(scan_signals(r.message).distinct.size() == 1);
        CHECK_FALSE(r.warnings.empty());
    }
    SECTION("an echo alone") {
        std::vector<std::string> lines;
        std::string_view rest = prompt;
        while (!rest.empty()) {
            const auto nl = rest.find('\n');
            lines.emplace_back(rest.substr(0, nl));
            rest.remove_prefix(nl + 1);
        }
        const auto r = read_lines(DialectKind::generic, lines, 0, prompt);
        CHECK_FALSE(signal_of(r));
        CHECK(scan_questions(r.message).questions.empty());
    }
    SECTION("one line equal to a prompt line is the agent's own") {
        const auto r = read_lines(
            DialectKind::generic, {"done", "<promise>EJECT: reason</promise>"}, 0, prompt);
        CHECK(signal_of(r) == Signal::eject);
    }
    SECTION("a signal after the agent closes its own code block is its own") {
        // The fence and the signal are the pair the protocol's example shows.
        const auto r = read_lines(DialectKind::generic,
                                  {"Tests:", "```", "ok", "```", "", "<promise>COMPLETE</promise>"},
                                  0,
                                  prompt);
        CHECK(signal_of(r) == Signal::complete);
        CHECK(r.warnings.empty());
    }
}

TEST_CASE("generic: the last line printed is the error of a failed run") {
    const auto r = read_lines(DialectKind::generic,
                              {"starting",
                               "Traceback (most recent call last):",
                               "RuntimeError: HTTP 401 Unauthorized",
                               ""},
                              1);
    CHECK(r.error == "RuntimeError: HTTP 401 Unauthorized");
    CHECK(r.retry == Retry::futile);
    CHECK(read_lines(DialectKind::generic, {"fine"}, 0).error.empty());
}

TEST_CASE("a usage message: the error line, not the help text after it") {
    // codex 0.169 given an unknown option (exit 2).
    const auto r = read_lines(DialectKind::codex,
                              {"error: unexpected argument '--frobnicate' found",
                               "",
                               "  tip: to pass '--frobnicate' as a value, use '-- --frobnicate'",
                               "",
                               "Usage: codex exec [OPTIONS] [PROMPT]",
                               "",
                               "For more information, try '--help'."},
                              2);
    CHECK(r.error == "error: unexpected argument '--frobnicate' found");
    CHECK(r.retry == Retry::futile);
}
