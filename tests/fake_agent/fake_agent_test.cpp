// The fake agent's script parsing, then the built binary itself on a few scripts: the daemon's
// integration tests trust it, so it is tested first.

#include "script.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using board::fake_agent::Action;
using board::fake_agent::parse_line;

namespace fs = std::filesystem;

namespace {

Action action(Action::Kind kind,
              std::string text = {},
              std::string context = {},
              long long number = 0) {
    return Action{kind, std::move(text), std::move(context), number};
}

std::string error_of(std::string_view line) {
    const auto parsed = parse_line(line);
    CHECK(parsed.actions.empty());
    return parsed.error;
}

}  // namespace

TEST_CASE("script: every action, in order") {
    const auto parsed = parse_line(
        "session=s-1 artifact=in-progress signal=CHECKPOINT signal=\"INPUT_NEEDED: Which DB? "
        "a:b\" question='{\"question\":\"Which DB?\",\"type\":\"blocking\"}' sleep=250 "
        "grandchild grandchild=closed grandchild=setsid flood=200 no-stdin cost=0.25 garbage "
        "stderr=\"two words\" stdout=\"line1\\nline2 \\\"q\\\" \\\\\" exit=3");
    REQUIRE(parsed.error.empty());
    const std::vector<Action> expected = {
        action(Action::Kind::session, "s-1"),
        action(Action::Kind::artifact, "in-progress"),
        action(Action::Kind::signal, "CHECKPOINT"),
        action(Action::Kind::signal, "INPUT_NEEDED", "Which DB? a:b"),
        action(Action::Kind::question, R"({"question":"Which DB?","type":"blocking"})"),
        action(Action::Kind::sleep, "250", {}, 250),
        action(Action::Kind::grandchild),
        action(Action::Kind::grandchild, "closed"),
        action(Action::Kind::grandchild, "setsid"),
        action(Action::Kind::flood, "200", {}, 200),
        action(Action::Kind::no_stdin),
        action(Action::Kind::cost, "0.25"),
        action(Action::Kind::garbage),
        action(Action::Kind::stderr_text, "two words"),
        action(Action::Kind::stdout_text, "line1\nline2 \"q\" \\"),
        action(Action::Kind::exit, "3", {}, 3),
    };
    CHECK(parsed.actions == expected);
    CHECK(board::fake_agent::skips_stdin(parsed.actions));
    CHECK(board::fake_agent::names_artifact(parsed.actions));
}

TEST_CASE("script: small forms") {
    CHECK(parse_line("").actions.empty());
    CHECK(parse_line("").error.empty());
    CHECK(parse_line("  hang=ignore-term ").actions ==
          std::vector<Action>{action(Action::Kind::hang, "ignore-term")});
    CHECK(parse_line("hang").actions == std::vector<Action>{action(Action::Kind::hang)});
    CHECK(parse_line("signal=CHECKPOINT:done").actions ==
          std::vector<Action>{action(Action::Kind::signal, "CHECKPOINT", "done")});
    // Names are not checked: the daemon's handling of unknown ones is under test too.
    CHECK(parse_line("signal=complete").actions ==
          std::vector<Action>{action(Action::Kind::signal, "complete")});
    CHECK(parse_line("question={\"question\":\"x\"}").actions ==
          std::vector<Action>{action(Action::Kind::question, "{\"question\":\"x\"}")});
    CHECK(parse_line("stdout=").actions == std::vector<Action>{action(Action::Kind::stdout_text)});
    CHECK_FALSE(board::fake_agent::names_artifact(parse_line("signal=COMPLETE").actions));
    CHECK_FALSE(board::fake_agent::skips_stdin(parse_line("signal=COMPLETE").actions));
}

TEST_CASE("script: malformed lines name the token and the reason") {
    CHECK(error_of("signal=COMPLETE bogus") ==
          "\"bogus\": unknown action (expected artifact=, signal=, question=, exit=, sleep=, "
          "hang, grandchild, commit=, wait=, flood=, no-stdin, cost=, session=, garbage, stderr=, "
          "stdout=)");
    CHECK(error_of("artifact=done") ==
          "\"artifact=done\": expected artifact=complete, "
          "in-progress or none");
    CHECK(error_of("signal") == "\"signal\": needs a value: signal=...");
    CHECK(error_of("signal=:context") == "\"signal=:context\": the signal has no name");
    CHECK(error_of("exit=256") == "\"exit=256\": expected an exit code from 0 to 255");
    CHECK(error_of("exit=-1") == "\"exit=-1\": expected an exit code from 0 to 255");
    CHECK(error_of("sleep=1s") == "\"sleep=1s\": expected milliseconds, from 0 to one day");
    CHECK(error_of("flood=1.5") ==
          "\"flood=1.5\": expected a whole number of MiB, from 0 to 65536");
    CHECK(error_of("cost=$1") == "\"cost=$1\": expected a decimal amount like 0.25");
    CHECK(error_of("cost=.5") == "\"cost=.5\": expected a decimal amount like 0.25");
    CHECK(error_of("session=a\"b") ==
          "\"session=a\"b\": expected a non-empty id without "
          "quotes, backslashes or control characters");
    CHECK(error_of("hang=forever") == "\"hang=forever\": expected hang or hang=ignore-term");
    CHECK(error_of("grandchild=2") ==
          "\"grandchild=2\": expected grandchild, grandchild=closed or grandchild=setsid");
    CHECK(error_of("garbage=1") == "\"garbage=1\": takes no value");
    CHECK(error_of("commit=../x") ==
          "\"commit=../x\": expected a file inside the working directory");
    CHECK(parse_line("commit=src/a.txt").actions ==
          std::vector<Action>{action(Action::Kind::commit, "src/a.txt")});
    CHECK(parse_line("wait=release").actions ==
          std::vector<Action>{action(Action::Kind::wait, "release")});
    CHECK(error_of("wait=../x") ==
          "\"wait=../x\": expected a file name in fake-agent/ (no '/', no leading '.')");
    CHECK(error_of("no-stdin=yes") == "\"no-stdin=yes\": takes no value");
    CHECK(error_of("question=") == "\"question=\": the question is empty");
    CHECK(error_of("exit=0 signal=COMPLETE") ==
          "\"signal=COMPLETE\": comes after exit= or hang, so it would never run");
    CHECK(error_of("hang sleep=1") ==
          "\"sleep=1\": comes after exit= or hang, so it would never run");
    CHECK(error_of("stdout=\"abc") == "unterminated \" opened at column 8");
    CHECK(error_of("stdout='abc") == "unterminated ' opened at column 8");
    CHECK(error_of("stdout=\"a\"b") == "text right after the closing quote at column 11");
}

TEST_CASE("script: line n for run n, then the last line again") {
    using board::fake_agent::line_for_run;
    using board::fake_agent::split_script;
    CHECK(split_script("a\nb\n") == std::vector<std::string>{"a", "b"});
    CHECK(split_script("a\r\n\nb") == std::vector<std::string>{"a", "", "b"});
    CHECK(split_script("").empty());
    CHECK(line_for_run(3, 1) == 0);
    CHECK(line_for_run(3, 3) == 2);
    CHECK(line_for_run(3, 4) == 2);
    CHECK(line_for_run(3, 100) == 2);
    CHECK(line_for_run(1, 0) == 0);
}

// The binary, in a temporary ticket folder.

namespace {

struct Outcome {
    int exit = -1;
    std::string out;
};

std::string read_text(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

struct TicketFolder {
    fs::path dir;

    TicketFolder() {
        dir = fs::temp_directory_path() / ("board-fake-agent-test-" + std::to_string(::getpid()));
        fs::remove_all(dir);
        fs::create_directories(dir / "fake-agent");
    }

    ~TicketFolder() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }

    void script(std::string_view phase, std::string_view text) const {
        std::ofstream(dir / "fake-agent" / std::string{phase}) << text;
    }

    /// Runs the fake agent for `phase` with `prompt` on stdin; stderr is kept out of `out`.
    Outcome run(std::string_view phase, std::string_view prompt) const {
        const fs::path prompt_file = dir / "stdin.txt";
        std::ofstream(prompt_file, std::ios::binary) << prompt;
        const std::string command =
            "cd '" + dir.string() + "' && BOARD_TICKET=PROJ-3 BOARD_PHASE=" + std::string{phase} +
            " BOARD_TICKET_DIR='" + dir.string() + "' BOARD_RUN=0007 BOARD_ARTIFACT='" +
            dir.string() + "/" + std::string{phase} + ".md' '" FAKE_AGENT_BIN "' < '" +
            prompt_file.string() + "' 2>/dev/null";
        Outcome outcome;
        FILE* pipe = ::popen(command.c_str(), "r");
        REQUIRE(pipe != nullptr);
        char buffer[4096];
        std::size_t got = 0;
        while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
            outcome.out.append(buffer, got);
        const int status = ::pclose(pipe);
        outcome.exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        return outcome;
    }
};

}  // namespace

TEST_CASE("binary: no script writes a complete artifact, prints COMPLETE and logs the run") {
    const TicketFolder ticket;
    const auto outcome = ticket.run("research", "the prompt\n");
    CHECK(outcome.exit == 0);
    CHECK(outcome.out == "<promise>COMPLETE</promise>\n");
    const auto artifact = read_text(ticket.dir / "research.md");
    CHECK(artifact.find("---\nstatus: complete\nsummary: fake research artifact, run 1\n---\n") ==
          0);
    CHECK(read_text(ticket.dir / "fake-agent" / "prompt-research-1.md") == "the prompt\n");
    const auto log = read_text(ticket.dir / "fake-agent" / "log");
    CHECK(log.find("ticket=PROJ-3 phase=research board_run=0007 n=1 pid=") == 0);
    CHECK(log.find(" prompt_bytes=11 cwd=" + ticket.dir.string() + "\n") != std::string::npos);
}

TEST_CASE("binary: one script line per run, the last repeated, malformed lines exit 70") {
    const TicketFolder ticket;
    ticket.script("planning",
                  "artifact=none signal=\"INPUT_NEEDED: Which DB?\" exit=0\n"
                  "no-stdin session=s1 cost=0.5 signal=COMPLETE\n"
                  "exit=4\n");
    auto outcome = ticket.run("planning", "p1");
    CHECK(outcome.exit == 0);
    CHECK(outcome.out == "<promise>INPUT_NEEDED: Which DB?</promise>\n");
    CHECK_FALSE(fs::exists(ticket.dir / "planning.md"));

    outcome = ticket.run("planning", "p2");
    CHECK(outcome.exit == 0);
    CHECK(outcome.out ==
          "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}\n"
          "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
          "\"total_cost_usd\":0.5,\"session_id\":\"s1\",\"result\":\"fake agent finished\"}\n"
          "<promise>COMPLETE</promise>\n");
    CHECK(read_text(ticket.dir / "planning.md").find("status: complete") != std::string::npos);
    CHECK_FALSE(fs::exists(ticket.dir / "fake-agent" / "prompt-planning-2.md"));

    CHECK(ticket.run("planning", "p3").exit == 4);
    CHECK(ticket.run("planning", "p4").exit == 4);
    CHECK(read_text(ticket.dir / "fake-agent" / "planning.count") == "4\n");
    const auto log = read_text(ticket.dir / "fake-agent" / "log");
    CHECK(log.find(" n=2 ") != std::string::npos);
    CHECK(log.find("prompt_bytes=-1") != std::string::npos);

    ticket.script("review", "signal=COMPLETE exit=0 stdout=late\n");
    outcome = ticket.run("review", "p");
    CHECK(outcome.exit == 70);
    CHECK(outcome.out.empty());
}
