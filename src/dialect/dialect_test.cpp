#include <board/agent_dialect.hpp>

#include <catch2/catch.hpp>

#include <algorithm>

using namespace board;
using Argv = std::vector<std::string>;

namespace {

LaunchRequest request(Argv command, Status phase = Status::research) {
    LaunchRequest r;
    r.command = std::move(command);
    r.phase = phase;
    r.writable = {"/work/repo/tickets/PROJ-1"};
    r.max_steps = 15;
    return r;
}

bool has_pair(const Argv& argv, std::string_view flag, std::string_view value) {
    for (std::size_t i = 0; i + 1 < argv.size(); ++i)
        if (argv[i] == flag && argv[i + 1] == value) return true;
    return false;
}

}  // namespace

TEST_CASE("a dialect is known by its name or by the program's file name") {
    CHECK(parse_dialect("claude") == DialectKind::claude);
    CHECK(parse_dialect("generic") == DialectKind::generic);
    CHECK_FALSE(parse_dialect("Claude"));
    CHECK(to_string(DialectKind::codex) == "codex");
    CHECK(dialect_of_command({"claude", "-p"}) == DialectKind::claude);
    CHECK(dialect_of_command({"/usr/local/bin/codex"}) == DialectKind::codex);
    CHECK(dialect_of_command({"./node_modules/.bin/gemini"}) == DialectKind::gemini);
    CHECK(dialect_of_command({"gemini-cli"}) == DialectKind::gemini);
    CHECK(dialect_of_command({"board-example-agent"}) == DialectKind::generic);
    CHECK(dialect_of_command({"python3", "claude.py"}) == DialectKind::generic);
}

TEST_CASE("claude: print mode, stream-json, edits allowed in the ticket folder, max turns") {
    const auto plan = plan_launch(DialectKind::claude, request({"claude"}));
    CHECK(plan.argv.front() == "claude");
    CHECK(std::count(plan.argv.begin(), plan.argv.end(), "-p") == 1);
    CHECK(has_pair(plan.argv, "--output-format", "stream-json"));
    CHECK(std::count(plan.argv.begin(), plan.argv.end(), "--verbose") == 1);
    CHECK(has_pair(plan.argv, "--permission-mode", "acceptEdits"));
    CHECK(has_pair(plan.argv, "--add-dir", "/work/repo/tickets/PROJ-1"));
    CHECK(has_pair(plan.argv, "--max-turns", "15"));
    CHECK(std::find(plan.argv.begin(), plan.argv.end(), "--resume") == plan.argv.end());
    const auto retries =
        std::find_if(plan.env_defaults.begin(), plan.env_defaults.end(), [](auto& kv) {
            return kv.first == "CLAUDE_CODE_MAX_RETRIES";
        });
    REQUIRE(retries != plan.env_defaults.end());
}

TEST_CASE("what the command already says is kept, not doubled") {
    const Argv old_default{"claude", "-p", "--output-format", "stream-json", "--verbose"};
    auto plan = plan_launch(DialectKind::claude, request(old_default));
    CHECK(std::count(plan.argv.begin(), plan.argv.end(), "-p") == 1);
    CHECK(std::count(plan.argv.begin(), plan.argv.end(), "--output-format") == 1);
    CHECK(std::count(plan.argv.begin(), plan.argv.end(), "--verbose") == 1);

    plan = plan_launch(DialectKind::claude,
                       request({"claude", "--dangerously-skip-permissions", "--max-turns=4"}));
    CHECK(std::find(plan.argv.begin(), plan.argv.end(), "--permission-mode") == plan.argv.end());
    CHECK(std::find(plan.argv.begin(), plan.argv.end(), "--max-turns") == plan.argv.end());
}

TEST_CASE("resume continues the ticket's last session") {
    auto r = request({"claude"});
    r.resume_session = "3f1c";
    CHECK(has_pair(plan_launch(DialectKind::claude, r).argv, "--resume", "3f1c"));
    const auto codex = plan_launch(DialectKind::codex, [&] {
        auto c = request({"codex"});
        c.resume_session = "thread-9";
        return c;
    }());
    // `codex exec [options] resume <id> -`: the id, then the prompt from stdin.
    REQUIRE(codex.argv.size() >= 4);
    CHECK(codex.argv[codex.argv.size() - 3] == "resume");
    CHECK(codex.argv[codex.argv.size() - 2] == "thread-9");
    CHECK(codex.argv.back() == "-");
}

TEST_CASE("codex: exec with JSON events, a workspace-write sandbox, the prompt from stdin") {
    const auto plan = plan_launch(DialectKind::codex, request({"codex"}));
    REQUIRE(plan.argv.size() > 2);
    CHECK(plan.argv[1] == "exec");
    CHECK(std::count(plan.argv.begin(), plan.argv.end(), "--json") == 1);
    CHECK(has_pair(plan.argv, "--sandbox", "workspace-write"));
    CHECK(has_pair(plan.argv, "--add-dir", "/work/repo/tickets/PROJ-1"));
    CHECK(plan.argv.back() == "-");
    // Confined by the board, Codex's own sandbox (which mounts) is off: Landlock rules.
    auto confined = request({"codex"});
    confined.confined = true;
    CHECK(has_pair(
        plan_launch(DialectKind::codex, confined).argv, "--sandbox", "danger-full-access"));
    // `exec` given already is not repeated; a sandbox chosen by the board is kept.
    const auto own = plan_launch(DialectKind::codex, request({"codex", "exec", "-s", "read-only"}));
    CHECK(std::count(own.argv.begin(), own.argv.end(), "exec") == 1);
    CHECK(std::find(own.argv.begin(), own.argv.end(), "--sandbox") == own.argv.end());
}

TEST_CASE("generic: the command as written") {
    const Argv command{"./my-agent", "--fast"};
    const auto plan = plan_launch(DialectKind::generic, request(command));
    CHECK(plan.argv == command);
    CHECK(plan.env_defaults.empty());
    CHECK(version_command(DialectKind::generic, command).empty());
    CHECK(version_command(DialectKind::claude, {"claude", "-p"}) == Argv{"claude", "--version"});
}

TEST_CASE("errors retrying cannot fix are told from transient ones") {
    CHECK(classify_error("API Error: 401 {\"type\":\"error\",\"error\":{\"type\":"
                         "\"authentication_error\",\"message\":\"invalid x-api-key\"}}") ==
          Retry::futile);
    CHECK(classify_error("error: unknown option '--frob'") == Retry::futile);
    CHECK(classify_error("error: unexpected argument '--full-auto' found") == Retry::futile);
    CHECK(classify_error("`claude` was not found on PATH") == Retry::futile);
    CHECK(classify_error("API Error: Unable to connect to API (ConnectionRefused)") ==
          Retry::helps);
    CHECK(classify_error("API Error: 529 overloaded") == Retry::helps);
    CHECK(classify_error("stream disconnected before completion") == Retry::helps);
    CHECK(classify_error("") == Retry::helps);
    CHECK(classify_error("unexpected status 401 Unauthorized: invalid x-api-key, url: "
                         "http://127.0.0.1:40123/v1/responses") == Retry::futile);
    CHECK(classify_error("Missing environment variable: `OPENAI_API_KEY`.") == Retry::futile);
    // Numbers that are not statuses, words that are not errors.
    CHECK(classify_error("connect ECONNREFUSED 127.0.0.1:40123") == Retry::helps);
    CHECK(classify_error("request req_401abc failed: 503") == Retry::helps);
    CHECK(classify_error("Memory usage: 403 MB; FAIL test_upload") == Retry::helps);
}
