#include <board/board_config.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace {

using namespace board;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

using Argv = std::vector<std::string>;

BoardConfig parse_ok(const std::string& text) {
    const auto result = parse_board_config(text);
    INFO(text);
    if (!result) FAIL(result.error().message);
    return result.value();
}

}  // namespace

TEST_CASE("a default BoardConfig holds the defaults of storage.md") {
    const BoardConfig c;
    CHECK(c.prefix == "PROJ");
    CHECK(c.implementing.max_output == 50u << 20);  // agents.<phase>.max_output
    CHECK(c.ship.policy == ShipMethod::merge);
    CHECK(c.ship.base.empty());
    CHECK(c.ship.cleanup);
    CHECK(c.policy.auto_research);
    CHECK_FALSE(c.policy.auto_planning);
    CHECK(c.policy.wip_limit(Status::research) == 3);
    CHECK(c.policy.wip_limit(Status::planning) == 2);
    CHECK(c.policy.wip_limit(Status::implementing) == 2);
    CHECK(c.policy.research_gate == Gate::none);
    CHECK(c.policy.planning_gate == Gate::approval);
    CHECK(c.policy.max_iterations == 10);
    CHECK(c.policy.max_attempts == 3);
    CHECK(c.policy.max_cost_usd == 10.0);
    CHECK(c.policy.review_agent);
    CHECK(c.daemon.max_parallel == 2);
    CHECK(c.daemon.poll == 10s);
    CHECK(c.daemon.debounce == 2s);
    CHECK(c.daemon.grace == 30s);
    const Argv claude{"claude"};
    CHECK(c.default_command == claude);
    CHECK_FALSE(c.default_dialect);
    CHECK(c.default_timeout == 30min);

    const auto [phase, steps, worktree] = GENERATE(table<Status, int, bool>({
        {Status::research, 15, false},
        {Status::planning, 15, false},
        {Status::implementing, 30, true},
        {Status::review, 10, false},
    }));
    CAPTURE(to_string(phase));
    const AgentConfig* agent = c.agent(phase);
    REQUIRE(agent != nullptr);
    CHECK(agent->max_steps == steps);
    CHECK(agent->worktree == worktree);
    CHECK(agent->enabled);
    CHECK_FALSE(agent->resume);
    CHECK(agent->command == claude);
    CHECK(agent->dialect == DialectKind::claude);
    CHECK(agent->timeout == 30min);
}

TEST_CASE("agent() is null for statuses without an agent") {
    const BoardConfig c;
    const Status status = GENERATE(Status::backlog, Status::ready, Status::done);
    CHECK(c.agent(status) == nullptr);
}

TEST_CASE("an empty or comment-only board.yaml is all defaults") {
    const std::string text = GENERATE(as<std::string>{},
                                      "",
                                      "# nothing here\n",
                                      "prefix: PROJ\n",
                                      "auto:\nwip:\ngates:\nbudget:\ndaemon:\nagents:\n",
                                      "agents:\n  research:\n    # max_steps: 15\n",
                                      "{}\n");
    CHECK(parse_ok(text) == BoardConfig{});
}

TEST_CASE("every key of board.yaml is read") {
    const auto c = parse_ok(R"(
prefix: ACME7
auto: { research: false, planning: true }
wip: { research: 0, planning: 5, implementing: 1 }
gates: { research: checkpoint, planning: none }
budget: { max_iterations: 4, max_attempts: 1, max_cost_usd: 2.5, retry_backoff: 250ms, retry_backoff_max: 2s }
daemon: { max_parallel: 8, poll: 500ms, debounce: 0s, grace: 1m }
agents:
  default: { command: [codex, exec, --full-auto], timeout: 1h, max_output: 1GB }
  research: { max_steps: 3, worktree: true, enabled: false, resume: true, max_output: 512KB }
  planning: { command: [my-planner, "--flag with space"], timeout: 90s }
  implementing: { max_steps: 99, worktree: false, timeout: 2h }
  review: { max_steps: 1, enabled: false, command: ['./review.sh'] }
ship: { policy: pr, base: main, remote: upstream, pr_command: [glab, mr, create, "{branch}"], cleanup: false }
)");
    CHECK(c.prefix == "ACME7");
    CHECK_FALSE(c.policy.auto_research);
    CHECK(c.policy.auto_planning);
    CHECK(c.policy.wip_limit(Status::research) == 0);
    CHECK(c.policy.wip_limit(Status::planning) == 5);
    CHECK(c.policy.wip_limit(Status::implementing) == 1);
    CHECK(c.policy.research_gate == Gate::checkpoint);
    CHECK(c.policy.retry_backoff_ms == 250);
    CHECK(c.policy.retry_backoff_max_ms == 2000);
    CHECK(c.policy.planning_gate == Gate::none);
    CHECK(c.policy.max_iterations == 4);
    CHECK(c.policy.max_attempts == 1);
    CHECK(c.policy.max_cost_usd == 2.5);
    CHECK_FALSE(c.policy.review_agent);  // from agents.review.enabled
    CHECK(c.daemon.max_parallel == 8);
    CHECK(c.daemon.poll == 500ms);
    CHECK(c.daemon.debounce == 0ms);
    CHECK(c.daemon.grace == 1min);
    const Argv codex{"codex", "exec", "--full-auto"};
    CHECK(c.default_command == codex);
    CHECK(c.default_timeout == 1h);

    CHECK(c.research.max_steps == 3);
    CHECK(c.research.worktree);
    CHECK_FALSE(c.research.enabled);
    CHECK(c.research.resume);
    CHECK(c.research.command == codex);  // inherited
    CHECK(c.research.timeout == 1h);     // inherited
    CHECK(c.research.max_output == 512u << 10);
    CHECK(c.planning.max_output == 1u << 30);  // inherited

    CHECK(c.planning.max_steps == 15);
    CHECK(c.planning.command == Argv{"my-planner", "--flag with space"});
    CHECK(c.planning.timeout == 90s);

    CHECK(c.implementing.max_steps == 99);
    CHECK_FALSE(c.implementing.worktree);
    CHECK(c.implementing.command == codex);
    CHECK(c.implementing.timeout == 2h);

    CHECK(c.review.max_steps == 1);
    CHECK_FALSE(c.review.enabled);
    CHECK(c.review.command == Argv{"./review.sh"});
    CHECK(c.review.timeout == 1h);

    CHECK(c.ship.policy == ShipMethod::pr);
    CHECK(c.ship.base == "main");
    CHECK(c.ship.remote == "upstream");
    CHECK(c.ship.pr_command == Argv{"glab", "mr", "create", "{branch}"});
    CHECK_FALSE(c.ship.cleanup);
}

TEST_CASE("phases inherit agents.default whichever order the file names them in") {
    const auto c = parse_ok(
        "agents:\n"
        "  research: { max_steps: 2 }\n"
        "  default: { command: [gemini], timeout: 5m }\n");
    CHECK(c.research.command == Argv{"gemini"});
    CHECK(c.research.timeout == 5min);
    CHECK(c.review.command == Argv{"gemini"});
    CHECK(c.research.max_steps == 2);
}

TEST_CASE("board.yaml errors name the key, the line and what was expected") {
    // {text, line, text the message must contain}
    const auto [text, line, needle] = GENERATE(table<std::string, int, std::string>({
        // unknown keys, top level and nested, with a suggestion for typos
        {"prefix: PROJ\nprefixx: X\n", 2, "prefixx: unknown key (did you mean \"prefix\"?)"},
        {"gates: {reserch: none}\n", 1, "gates.reserch: unknown key (did you mean \"research\"?)"},
        {"gates:\n  research: none\n  reserch: none\n", 3, "gates.reserch: unknown key"},
        {"agents:\n  review:\n    enable: true\n", 3, "agents.review.enable: unknown key"},
        {"agents:\n  default:\n    max_steps: 3\n", 3, "expected one of command, timeout"},
        {"agents:\n  reviewer: {}\n", 2, "agents.reviewer: unknown key"},
        {"wip:\n  review: 1\n", 2, "wip.review: unknown key"},
        {"frobnicate: 1\n", 1, "frobnicate: unknown key; expected one of prefix, auto"},
        // duplicate keys would otherwise let the second silently win
        {"prefix: A\nprefix: B\n", 2, "prefix: duplicate key"},
        // notify: an argv list, a positive timeout, known keys only
        {"notify:\n  comand: [x]\n", 2, "notify.comand: unknown key (did you mean \"command\"?)"},
        {"notify:\n  command: notify-send board\n", 2, "notify.command: expected an argv list"},
        {"notify:\n  command: []\n", 2, "notify.command: expected an argv list"},
        {"notify:\n  timeout: 0s\n", 2, "notify.timeout: expected a positive duration"},
        {"notify:\n  max_parallel: 0\n", 2, "notify.max_parallel: expected a whole number >= 1"},
        {"notify: [x]\n", 1, "notify: expected a mapping"},
        // handoffs and reviewers: per awaiting kind, durations and people's names
        {"handoffs:\n  reveiw: {remind_after: 1h}\n",
         2,
         "handoffs.reveiw: unknown key (did you mean \"review\"?)"},
        {"handoffs:\n  review: {remind_after: 0s}\n",
         2,
         "handoffs.review.remind_after: expected a positive duration"},
        {"handoffs:\n  review: {escalate_to: carol}\n",
         2,
         "handoffs.review.escalate_to: expected a list of names"},
        {"reviewers:\n  review: [alice, \"bob smith\"]\n",
         2,
         "reviewers.review[1]: expected a name of one word"},
        // wrong types
        {"auto: true\n", 1, "auto: expected a mapping of research, planning, got \"true\""},
        {"auto: {research: yes}\n", 1, "auto.research: expected true or false, got \"yes\""},
        {"auto: {research: \"true\"}\n", 1, "expected true or false, got the string \"true\""},
        {"wip: {research: three}\n", 1, "wip.research: expected a whole number >= 0"},
        {"wip: {research: \"3\"}\n", 1, "got the string \"3\""},
        {"wip: {research: 1.5}\n", 1, "wip.research: expected a whole number >= 0"},
        {"wip: [1, 2]\n", 1, "wip: expected a mapping"},
        {"budget:\n  max_cost_usd: lots\n", 2, "budget.max_cost_usd: expected an amount in USD"},
        {"daemon:\n  max_parallel: [2]\n", 2, "daemon.max_parallel: expected a whole number"},
        {"agents: {default: {command: [claude, {a: b}]}}\n", 1, "command[1]: expected a string"},
        {"- prefix: PROJ\n", 1, "(top level): expected a mapping"},
        {"prefix:\n", 1, "prefix: expected an uppercase letter"},
        // negative and zero numbers
        {"wip: {planning: -1}\n", 1, "wip.planning: expected a whole number >= 0, got \"-1\""},
        {"budget: {max_iterations: 0}\n", 1, "expected a whole number >= 1, got \"0\""},
        {"budget: {max_attempts: -2}\n", 1, "budget.max_attempts: expected a whole number >= 1"},
        {"budget: {max_cost_usd: -0.5}\n", 1, "budget.max_cost_usd: expected an amount in USD"},
        {"budget: {max_cost_usd: .nan}\n", 1, "budget.max_cost_usd: expected an amount"},
        {"daemon: {max_parallel: 0}\n", 1, "daemon.max_parallel: expected a whole number >= 1"},
        {"agents: {review: {max_steps: 0}}\n", 1, "agents.review.max_steps: expected a whole"},
        {"wip: {research: 99999999999}\n", 1, "wip.research: expected a whole number"},
        // durations
        {"daemon:\n  poll: 10\n", 2, "daemon.poll: expected a positive duration like 500ms"},
        {"daemon:\n  poll: 10 seconds\n", 2, "got \"10 seconds\""},
        {"daemon:\n  poll: 0s\n", 2, "daemon.poll: expected a positive duration"},
        {"daemon:\n  grace: -5s\n", 2, "daemon.grace: expected a duration like 500ms"},
        {"daemon:\n  debounce: 1.5s\n", 2, "daemon.debounce: expected a duration"},
        // 30 days at most: a timer that far off overflows the clock (spin, or an instant timeout)
        {"daemon:\n  poll: 3000000h\n",
         2,
         "daemon.poll: expected a positive duration like "
         "500ms, 10s, 5m or 1h, at most 720h, got \"3000000h\""},
        {"agents:\n  default:\n    timeout: 721h\n", 3, "at most 720h, got \"721h\""},
        {"agents:\n  default:\n    timeout: 30 min\n", 3, "agents.default.timeout: expected"},
        {"agents:\n  planning:\n    timeout: 0m\n", 3, "agents.planning.timeout: expected a pos"},
        // shipping: a known policy, branch names git takes as names, never as options
        {"ship:\n  policy: squash\n", 2, "ship.policy: expected merge, pr or none, got \"squash\""},
        {"ship:\n  base: --force\n", 2, "ship.base: expected a git branch or remote name"},
        {"ship:\n  remote: \"\"\n", 2, "ship.remote: expected a git branch or remote name"},
        {"ship:\n  pr_command: gh pr create\n", 2, "ship.pr_command: expected an argv list"},
        // output caps: a size with its unit, within the documented range
        {"agents:\n  default:\n    max_output: 50\n",
         3,
         "agents.default.max_output: expected a size like 512KB, 50MB or 1GB, from 64KB to 64GB, "
         "got \"50\""},
        {"agents:\n  review:\n    max_output: 1KB\n", 3, "from 64KB to 64GB, got \"1KB\""},
        {"agents:\n  review:\n    max_output: 65GB\n", 3, "got \"65GB\""},
        {"agents:\n  review:\n    max_output: 5 MB\n", 3, "got \"5 MB\""},
        // commands: an argv list, never a string, never empty
        {"agents:\n  default:\n    command: claude -p\n",
         3,
         "agents.default.command: expected an argv list like [claude, -p], got the string "
         "\"claude -p\""},
        {"agents:\n  review:\n    command: \"./review.sh\"\n", 3, "got the string"},
        {"agents:\n  default:\n    command: []\n", 3, "got an empty list"},
        {"agents:\n  default:\n    command:\n", 3, "agents.default.command: expected an argv"},
        {"agents:\n  default:\n    command: ['', x]\n", 3, "expected a program name first"},
        {"agents:\n  default:\n    command: {a: b}\n", 3, "got a mapping"},
        // gates
        {"gates:\n  planning: manual\n",
         2,
         "expected none, checkpoint or approval, got \"manual\""},
        {"gates: {research: Approval}\n", 1, "gates.research: expected none, checkpoint"},
        // prefixes
        {"prefix: proj\n", 1, "prefix: expected an uppercase letter then up to 15"},
        {"prefix: 1PROJ\n", 1, "got \"1PROJ\""},
        {"prefix: PRO-J\n", 1, "got \"PRO-J\""},
        {"prefix: ABCDEFGHIJKLMNOPQ\n", 1, "got \"ABCDEFGHIJKLMNOPQ\""},
        {"prefix: \"\"\n", 1, "prefix: expected an uppercase letter"},
        // YAML syntax errors, reported with yaml-cpp's line made 1-based
        {"prefix: PROJ\nwip: {research: 3\n", 3, "invalid YAML"},
        {"prefix: PROJ\ngates: [none,\n", 3, "invalid YAML"},
        {"prefix: PROJ\n  auto: x\n", 2, "invalid YAML"},
        {"prefix: PROJ\nwip: *nowhere\n", 2, "invalid YAML"},
        {"prefix: A\n---\nprefix: B\n", 3, "expected one YAML document"},
        // not UTF-8: a UTF-16 byte-order mark must not make an empty board.yaml of defaults
        {"\xFF\xFEp\0r\0", 1, "line 1: not UTF-8 text (byte 0xFF at column 1)"},
        {"prefix: PROJ\n# caf\xE9\n", 2, "not UTF-8 text (byte 0xE9 at column 6)"},
    }));
    INFO(text);
    const auto result = parse_board_config(text);
    REQUIRE_FALSE(result);
    const ConfigError& error = result.error();
    CHECK(error.line == line);
    CHECK(error.column >= 1);
    CHECK_THAT(error.message, StartsWith("line " + std::to_string(line) + ": "));
    CHECK_THAT(error.message, Contains(needle));
}

TEST_CASE("durations: digits and one unit of ms, s, m, h") {
    const auto [text, ms] = GENERATE(table<std::string, long long>({
        {"500ms", 500},
        {"0ms", 0},
        {"0s", 0},
        {"10s", 10'000},
        {"5m", 300'000},
        {"1h", 3'600'000},
        {"30m", 1'800'000},
        {"007s", 7'000},
        {"720h", 2'592'000'000},
        {"2592000000ms", 2'592'000'000},
    }));
    CAPTURE(text);
    const auto d = parse_duration(text);
    REQUIRE(d);
    CHECK(d->count() == ms);
    CHECK(parse_duration(format_duration(*d)) == d);
}

TEST_CASE("durations: anything else is refused") {
    const std::string text = GENERATE(as<std::string>{},
                                      "",
                                      "10",
                                      "s",
                                      "ms",
                                      "-5s",
                                      "+5s",
                                      "1.5s",
                                      "10 s",
                                      " 10s",
                                      "10S",
                                      "1d",
                                      "1h30m",
                                      "10sec",
                                      "99999999999999999999ms",
                                      "9999999999999999h",
                                      "721h",
                                      "2592000001ms",
                                      "3000000h");
    CAPTURE(text);
    CHECK_FALSE(parse_duration(text));
}

TEST_CASE("sizes: digits and one unit of B, KB, MB, GB, binary") {
    CHECK(parse_size("0B") == 0u);
    CHECK(parse_size("512KB") == 512u << 10);
    CHECK(parse_size("50MB") == 50u << 20);
    CHECK(parse_size("2GB") == 2ull << 30);
    CHECK(parse_size("70000B") == 70000u);
    for (const char* bad : {"", "50", "MB", "-5MB", "5 MB", "5mb", "1.5GB", "5TB", "99999999999GB"})
        CHECK_FALSE(parse_size(bad));
    for (const std::uint64_t bytes :
         {std::uint64_t{50} << 20, std::uint64_t{70000}, std::uint64_t{3} << 30})
        CHECK(parse_size(format_size(bytes)) == bytes);
    CHECK(format_size(default_max_output) == "50MB");
}

TEST_CASE("format_duration picks the largest exact unit") {
    CHECK(format_duration(30min) == "30m");
    CHECK(format_duration(2h) == "2h");
    CHECK(format_duration(10s) == "10s");
    CHECK(format_duration(1500ms) == "1500ms");
    CHECK(format_duration(0ms) == "0ms");
}

TEST_CASE("the board.yaml that board init writes loads as exactly the defaults") {
    const std::string prefix = GENERATE(as<std::string>{}, "PROJ", "ACME", "X", "AB12");
    BoardConfig expected;
    expected.prefix = prefix;
    const std::string text = default_board_yaml(prefix);
    CHECK(parse_ok(text) == expected);
}

TEST_CASE("the default board.yaml writes every key, and Codex as a commented alternative") {
    const std::string text = default_board_yaml("PROJ");
    for (const char* key :
         {"prefix:",       "auto:",         "wip:",           "gates:",
          "budget:",       "daemon:",       "agents:",        "max_iterations:",
          "max_attempts:", "max_cost_usd:", "retry_backoff:", "retry_backoff_max:",
          "max_parallel:", "poll:",         "debounce:",      "grace:",
          "default:",      "command:",      "timeout:",       "max_steps:",
          "worktree:",     "enabled:",      "resume:",        "implementing:",
          "review:",       "max_output:",   "ship:",          "pr_command:"}) {
        CHECK_THAT(text, Contains(key));
    }
    CHECK_THAT(text, Contains("    # command: [codex]"));
    CHECK_THAT(text, Contains("dialect: auto"));

    // Switching to Codex is: comment one line, uncomment the other; its dialect follows.
    std::string codex = text;
    const std::string claude_line = "    command: [claude]";
    const std::string codex_line = "    # command: [codex]";
    codex.replace(codex.find(claude_line), 4, "    # ");
    codex.replace(codex.find(codex_line), codex_line.size(), "    command: [codex]");
    const auto c = parse_ok(codex);
    CHECK(c.default_command == Argv{"codex"});
    CHECK(c.implementing.command == Argv{"codex"});
    CHECK(c.implementing.dialect == DialectKind::codex);
}

TEST_CASE("dialect and sandbox: by the program's name unless board.yaml names one") {
    const auto c = parse_ok(R"(
agents:
  default: { command: [/opt/bin/codex, exec] }
  planning: { command: [my-agent] }
  implementing: { command: [my-agent], dialect: claude }
  review: { dialect: generic }
)");
    CHECK(c.research.dialect == DialectKind::codex);
    CHECK(c.planning.dialect == DialectKind::generic);
    CHECK(c.implementing.dialect == DialectKind::claude);
    CHECK(c.review.dialect == DialectKind::generic);

    const auto d = parse_ok(
        "agents:\n  default: { command: [run-it], dialect: gemini }\n"
        "  review: { command: [claude] }\n");
    CHECK(d.research.dialect == DialectKind::gemini);
    CHECK(d.review.dialect == DialectKind::claude);  // its own command: its own name

    const auto e =
        parse_ok("agents:\n  default: { sandbox: none }\n  review: { sandbox: landlock }\n");
    CHECK(e.research.sandbox == SandboxMode::none);
    CHECK(e.review.sandbox == SandboxMode::landlock);
    CHECK(BoardConfig{}.research.sandbox == SandboxMode::automatic);
    const auto bad_sandbox = parse_board_config("agents:\n  planning:\n    sandbox: bwrap\n");
    REQUIRE_FALSE(bad_sandbox);
    CHECK_THAT(bad_sandbox.error().message,
               Contains("agents.planning.sandbox: expected auto, landlock or none, got \"bwrap\""));

    const auto bad = parse_board_config("agents:\n  default:\n    dialect: claud\n");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().line == 3);
    CHECK_THAT(bad.error().message,
               Contains("agents.default.dialect: expected auto, claude, codex, gemini or "
                        "generic, got \"claud\""));
}

TEST_CASE("notify: off by default - a command, timeout and limit when given") {
    CHECK(BoardConfig{}.notify.command.empty());
    CHECK(BoardConfig{}.notify.timeout == 10s);
    const auto c =
        parse_ok("notify:\n  command: [notify-send, board]\n  timeout: 2s\n  max_parallel: 1\n");
    CHECK(c.notify.command == Argv{"notify-send", "board"});
    CHECK(c.notify.timeout == 2s);
    CHECK(c.notify.max_parallel == 1);
    // The default file shows it commented out; uncommented, it loads.
    std::string text = default_board_yaml("PROJ");
    CHECK_THAT(text, Contains("# notify:"));
    for (const char* line : {"# notify:", "#   command: [notify-send, board]"})
        text.replace(text.find(line), 2, "");
    CHECK(parse_ok(text).notify.command == Argv{"notify-send", "board"});
}

TEST_CASE("max_questions: 5 per run unless a phase says otherwise") {
    CHECK(BoardConfig{}.research.max_questions == 5);
    const auto c = parse_ok("agents:\n  planning: {max_questions: 1}\n");
    CHECK(c.planning.max_questions == 1);
    CHECK(c.research.max_questions == 5);
    CHECK(parse_board_config("agents:\n  planning: {max_questions: 0}\n")
              .error()
              .message.find("agents.planning.max_questions: expected a whole number >= 1") !=
          std::string::npos);
}

TEST_CASE("handoffs and reviewers: none by default, per awaiting kind when given") {
    for (const auto& h : BoardConfig{}.policy.handoffs) CHECK(h == HandoffPolicy{});
    const auto c = parse_ok(
        "handoffs:\n  review: {remind_after: 4h, escalate_after: 72h, escalate_to: [carol]}\n"
        "  input: {remind_after: 30m}\nreviewers:\n  review: [alice, bob]\n");
    const HandoffPolicy& review = c.policy.handoff(Awaiting::review);
    CHECK(review.remind_after_ms == 4 * 3'600'000);
    CHECK(review.escalate_after_ms == 72 * 3'600'000);
    CHECK(review.escalate_to == Argv{"carol"});
    CHECK(review.reviewers == Argv{"alice", "bob"});
    CHECK(c.policy.handoff(Awaiting::input).remind_after_ms == 30 * 60'000);
    CHECK(c.policy.handoff(Awaiting::approval) == HandoffPolicy{});
    // The default file shows them commented out; uncommented, they load.
    std::string text = default_board_yaml("PROJ");
    for (const char* line : {"# handoffs:", "#   review: {", "# reviewers:", "#   review: [alice"})
        text.replace(text.find(line), 2, "");
    CHECK(parse_ok(text).policy.handoff(Awaiting::review).reviewers == Argv{"alice", "bob"});
}

TEST_CASE("is_valid_prefix follows ^[A-Z][A-Z0-9]{0,15}$") {
    const auto [prefix, valid] = GENERATE(table<std::string, bool>({
        {"PROJ", true},
        {"A", true},
        {"A1", true},
        {"ABCDEFGHIJKLMNOP", true},
        {"ABCDEFGHIJKLMNOPQ", false},
        {"", false},
        {"1A", false},
        {"proj", false},
        {"PR-J", false},
        {"PR J", false},
    }));
    CAPTURE(prefix);
    CHECK(is_valid_prefix(prefix) == valid);
}

TEST_CASE("load_board_config reads a file, and reports a missing one with line 0") {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("board_config_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto file = dir / "board.yaml";
    {
        std::ofstream out{file};
        out << "prefix: FILE\nwip: {research: x}\n";
    }
    const auto bad = load_board_config(file);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().line == 2);
    {
        std::ofstream out{file};
        out << default_board_yaml("FILE");
    }
    const auto good = load_board_config(file);
    REQUIRE(good);
    CHECK(good.value().prefix == "FILE");

    const auto missing = load_board_config(dir / "nope.yaml");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().line == 0);
    CHECK_THAT(missing.error().message, Contains("nope.yaml"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("parse_board_config never throws, whatever the damage to the file") {
    // Mangled variants of the default file: each must come back as a value or an error.
    const std::string original = default_board_yaml("PROJ");
    std::mt19937 rng{20261123};
    std::uniform_int_distribution<std::size_t> position{0, original.size() - 1};
    const std::string junk = ":-[]{}'\"#&*!|>%@` \t\n\\0123x";
    std::uniform_int_distribution<std::size_t> pick{0, junk.size() - 1};
    for (int i = 0; i < 300; ++i) {
        std::string text = original;
        for (int edits = 0; edits < 1 + i % 4; ++edits) {
            const std::size_t at = position(rng) % text.size();
            if (edits % 2 == 0) {
                text[at] = junk[pick(rng)];
            } else {
                text.erase(at, 1 + at % 7);
            }
        }
        INFO(text);
        ConfigResult result = BoardConfig{};
        CHECK_NOTHROW(result = parse_board_config(text));
        if (!result) CHECK_THAT(result.error().message, StartsWith("line "));
    }
}
