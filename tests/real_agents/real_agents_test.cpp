// The agents our users run, end to end: the real Claude Code and Codex CLIs (npm), started by
// the built board-daemon on a board made by `board init` in a fresh git repository, talking
// to a model stand-in this test serves on loopback (model_standin.hpp).

#include "model_standin.hpp"
#include "support/child_process.hpp"
#include "support/temp_dir.hpp"

#include <board/event_log.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using namespace board;
using namespace board::testing;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

/// Where `claude` and `codex` are: $BOARD_AGENT_CLI_BIN, else where scripts/agent-clis.sh
/// puts them.
fs::path cli_bin() {
    const char* env = std::getenv("BOARD_AGENT_CLI_BIN");
    return env && *env ? fs::path{env} : fs::path{BOARD_AGENT_CLI_BIN};
}

/// True when `program` is installed; otherwise the test says why it checks nothing.
bool installed(const std::string& program) {
    if (::access((cli_bin() / program).c_str(), X_OK) == 0) return true;
    WARN("SKIPPED: " << (cli_bin() / program).string()
                     << " is not installed (scripts/agent-clis.sh installs it from npm; it "
                        "could not reach the registry)");
    return false;
}

/// A git repository with one commit, a board made by `board init`, a home of its own.
struct Repo {
    TempDir scratch{"board-real-agents-"};
    fs::path root = scratch.path() / "repo";
    fs::path home = scratch.path() / "home";
    int runs = 0;

    Repo() {
        fs::create_directories(root);
        fs::create_directories(home);
        write_file(root / "README.md", "# A project\n");
        REQUIRE(run({"/usr/bin/git", "init", "-q", "-b", "main", root.string()}) == 0);
        REQUIRE(run({"/usr/bin/git", "-C", root.string(), "add", "README.md"}) == 0);
        REQUIRE(run({"/usr/bin/git", "-C", root.string(), "commit", "-q", "-m", "start"}) == 0);
        REQUIRE(board({"init", root.string(), "--prefix", "P"}) == 0);
    }

    std::vector<std::string> env() const {
        return {"HOME=" + home.string(),
                "PATH=" + cli_bin().string() + ":/usr/local/bin:/usr/bin:/bin",
                "GIT_AUTHOR_NAME=agent",
                "GIT_AUTHOR_EMAIL=agent@example.test",
                "GIT_COMMITTER_NAME=agent",
                "GIT_COMMITTER_EMAIL=agent@example.test"};
    }

    int run(const std::vector<std::string>& argv) {
        Child c = spawn(argv, scratch.path(), "cmd-" + std::to_string(++runs), env());
        const int code = c.wait(60s);
        INFO(c.stderr_text());
        return code;
    }

    int board(std::vector<std::string> args) {
        std::vector<std::string> argv{BOARD_CLI_BIN};
        argv.insert(argv.end(), args.begin(), args.end());
        if (args.front() != "init")
            argv.insert(argv.end(), {"--board", root.string(), "--as", "ana"});
        return run(argv);
    }

    std::string create(const std::string& title) {
        std::vector<std::string> argv{
            BOARD_CLI_BIN, "create", title, "--board", root.string(), "--as", "ana"};
        Child c = spawn(argv, scratch.path(), "cmd-" + std::to_string(++runs), env());
        REQUIRE(c.wait(60s) == 0);
        std::string id = c.stdout_text();
        id.erase(id.find_last_not_of('\n') + 1);
        return id;
    }

    Child daemon(std::vector<std::string> env_extra, std::vector<std::string> args = {}) {
        std::vector<std::string> argv{BOARD_DAEMON_BIN,
                                      "--board",
                                      root.string(),
                                      "--watch",
                                      "--log-format",
                                      "json",
                                      "--debounce",
                                      "0s",
                                      "--poll",
                                      "1s"};
        argv.insert(argv.end(), args.begin(), args.end());
        auto e = env();
        e.insert(e.end(), env_extra.begin(), env_extra.end());
        return spawn(argv, scratch.path(), "daemon-" + std::to_string(++runs), e);
    }

    Ticket ticket(const std::string& id) const {
        auto loaded = load_ticket(root / "tickets" / id);
        REQUIRE(std::holds_alternative<Loaded>(loaded));
        return std::get<Loaded>(loaded).ticket;
    }

    std::vector<RunFinished> finished_runs(const std::string& id) const {
        std::vector<RunFinished> out;
        auto r = read_log(root / "tickets" / id / "events.jsonl", [&](const Event& e) {
            if (const auto* f = std::get_if<RunFinished>(&e.payload)) out.push_back(*f);
        });
        REQUIRE(std::holds_alternative<ReadReport>(r));
        return out;
    }

    /// Waits until every ticket in `ids` satisfies `condition`; false after `limit`.
    bool wait_all(const std::vector<std::string>& ids,
                  const std::function<bool(const Ticket&)>& condition,
                  std::chrono::seconds limit = 240s) const {
        std::vector<std::filesystem::path> folders;
        for (const auto& id : ids) folders.push_back(root / "tickets" / id);
        const bool all = board::testing::wait_until(folders, limit, [&] {
            return std::all_of(ids.begin(), ids.end(), [&](const std::string& id) {
                auto loaded = load_ticket(root / "tickets" / id);
                const auto* ok = std::get_if<Loaded>(&loaded);
                return ok && condition(ok->ticket);
            });
        });
        if (!all) {
            for (const auto& id : ids) {
                const Ticket t = ticket(id);
                std::string last_note = t.notes.empty() ? "" : t.notes.back().text;
                UNSCOPED_INFO(id << ": " << to_string(t.status) << ", awaiting "
                                 << (t.awaiting ? to_string(*t.awaiting) : "agent") << ", runs "
                                 << t.runs_total << ", last note: " << last_note);
            }
        }
        return all;
    }

    void stop(Child& daemon) const {
        ::kill(daemon.pid, SIGTERM);
        CHECK(daemon.wait(60s) == 0);
    }
};

bool awaits(const Ticket& t, Status status, Awaiting awaiting) {
    return t.status == status && t.awaiting == awaiting;
}

/// Points Codex at the stand-in through its own config file (Codex ignores OPENAI_BASE_URL).
void configure_codex(const Repo& repo, unsigned short port) {
    write_file(repo.home / ".codex" / "config.toml",
               "model = \"gpt-5.5\"\n"
               "model_provider = \"standin\"\n"
               "[model_providers.standin]\n"
               "name = \"standin\"\n"
               "base_url = \"http://127.0.0.1:" +
                   std::to_string(port) +
                   "/v1\"\n"
                   "wire_api = \"responses\"\n"
                   "env_key = \"OPENAI_API_KEY\"\n");
}

/// Switches the board's default agent to Codex, as a user would in the generated file.
void use_codex(const Repo& repo) {
    std::string yaml = read_file(repo.root / "board.yaml");
    const std::string claude = "    command: [claude]";
    const auto at = yaml.find(claude);
    REQUIRE(at != std::string::npos);
    yaml.replace(at, claude.size(), "    command: [codex]");
    write_file(repo.root / "board.yaml", yaml);
}

std::string notes_of(const Ticket& t) {
    std::string out;
    for (const auto& n : t.notes) out += n.text + "\n";
    return out;
}

}  // namespace

TEST_CASE("Claude Code finishes tickets on a board made by board init") {
    if (!installed("claude")) return;
    ModelStandin model;
    Repo repo;
    std::vector<std::string> ids;
    for (const char* title : {"Retry uploads", "Cache the index", "Keep sessions", "Faster backup"})
        ids.push_back(repo.create(title));
    // A person's Claude Code state, as a first start leaves it: the agents' Claude Code
    // keeps its own in it from then on.
    const std::string state_before = "{\n  \"numStartups\": 1\n}\n";
    write_file(repo.home / ".claude.json", state_before);
    Child daemon =
        repo.daemon({"ANTHROPIC_BASE_URL=http://127.0.0.1:" + std::to_string(model.port()),
                     "ANTHROPIC_API_KEY=sk-ant-test"});
    INFO(daemon.stdout_text());
    INFO(daemon.stderr_text());

    // Research runs on its own (auto.research); a person starts planning (auto.planning off).
    REQUIRE(repo.wait_all(ids, [](const Ticket& t) { return t.status == Status::ready; }));
    for (const auto& id : ids) REQUIRE(repo.board({"start", id}) == 0);
    REQUIRE(repo.wait_all(
        ids, [](const Ticket& t) { return awaits(t, Status::planning, Awaiting::approval); }));
    for (const auto& id : ids) {
        const Ticket t = repo.ticket(id);
        REQUIRE(t.artifact(ArtifactKind::plan));
        CHECK(t.artifact(ArtifactKind::plan)->status == ArtifactStatus::complete);
        CHECK(fs::exists(repo.root / "tickets" / id / "plan.md"));
    }

    // Approved plans are implemented in worktrees, prepared for review, handed to a person.
    for (const auto& id : ids) REQUIRE(repo.board({"approve", id, "go ahead"}) == 0);
    REQUIRE(repo.wait_all(
        ids, [](const Ticket& t) { return awaits(t, Status::review, Awaiting::review); }));
    for (const auto& id : ids)
        CHECK(fs::exists(repo.root / ".board" / "worktrees" / id / "README.md"));

    // One review is rejected: its feedback reaches the model in the next implementing run.
    const std::string feedback = "Use the retry helper in net/retry.cpp (feedback 7f3a)";
    const auto asked_before = model.requests().size();
    REQUIRE(repo.board({"reject", ids[0], feedback}) == 0);
    REQUIRE(repo.wait_all({ids[0]}, [](const Ticket& t) {
        return awaits(t, Status::review, Awaiting::review) && t.runs_total > 4;
    }));
    const auto requests = model.requests();
    CHECK(std::any_of(
        requests.begin() + static_cast<std::ptrdiff_t>(asked_before),
        requests.end(),
        [&](const std::string& body) { return body.find("feedback 7f3a") != std::string::npos; }));
    for (const auto& id : ids) REQUIRE(repo.board({"approve", id, "ship it"}) == 0);
    REQUIRE(repo.wait_all(ids, [](const Ticket& t) { return t.status == Status::done; }));
    repo.stop(daemon);

    // Claude Code rewrites ~/.claude.json at every run (its projects, its counters): none of
    // that is taken for an agent changing what it may run.
    CHECK(read_file(repo.home / ".claude.json") != state_before);  // Claude Code wrote there
    for (const std::string& said : {daemon.stdout_text(), daemon.stderr_text()})
        CHECK(said.find("MCP servers or project approvals") == std::string::npos);

    // Every run: no error, its cost, tokens and session from Claude Code's own report.
    for (const auto& id : ids) {
        CAPTURE(id);
        const auto runs = repo.finished_runs(id);
        CHECK(runs.size() >= 4);
        for (const auto& run : runs) {
            CAPTURE(run.run);
            CHECK(run.exit_code == 0);
            CHECK(run.error.empty());
            CHECK(run.signal == Signal::complete);
            CHECK(run.cost_usd > 0);
            CHECK(run.input_tokens > 0);
            CHECK(run.output_tokens > 0);
            CHECK(run.cache_read_tokens > 0);
            CHECK_FALSE(run.session.empty());
        }
    }
}

TEST_CASE("Codex takes tickets through planning on a board made by board init") {
    if (!installed("codex")) return;
    ModelStandin model;
    Repo repo;
    use_codex(repo);
    configure_codex(repo, model.port());
    std::vector<std::string> ids{repo.create("Retry uploads"), repo.create("Cache the index")};
    Child daemon = repo.daemon({"OPENAI_API_KEY=sk-test"});
    INFO(daemon.stdout_text());
    INFO(daemon.stderr_text());
    REQUIRE(repo.wait_all(ids, [](const Ticket& t) { return t.status == Status::ready; }));
    for (const auto& id : ids) REQUIRE(repo.board({"start", id}) == 0);
    REQUIRE(repo.wait_all(
        ids, [](const Ticket& t) { return awaits(t, Status::planning, Awaiting::approval); }));
    repo.stop(daemon);
    for (const auto& id : ids) {
        CAPTURE(id);
        CHECK(read_file(repo.root / "tickets" / id / "plan.md").find("status: complete") !=
              std::string::npos);
        for (const auto& run : repo.finished_runs(id)) {
            CAPTURE(run.run);
            CHECK(run.error.empty());
            CHECK(run.signal == Signal::complete);
            CHECK(run.input_tokens > 0);
            CHECK(run.cache_read_tokens > 0);
            CHECK_FALSE(run.session.empty());
        }
    }
}

TEST_CASE("a model service refusing connections reaches a person within 60 s") {
    const std::string program = GENERATE(as<std::string>{}, "claude", "codex");
    CAPTURE(program);
    if (!installed(program)) return;
    Repo repo;
    const unsigned short port = refusing_port();
    std::vector<std::string> env;
    if (program == "codex") {
        use_codex(repo);
        configure_codex(repo, port);
        env = {"OPENAI_API_KEY=sk-test"};
    } else {
        env = {"ANTHROPIC_BASE_URL=http://127.0.0.1:" + std::to_string(port),
               "ANTHROPIC_API_KEY=sk-ant-test"};
    }
    const std::string id = repo.create("Retry uploads");
    const auto started = std::chrono::steady_clock::now();
    Child daemon = repo.daemon(env);
    INFO(daemon.stderr_text());
    REQUIRE(repo.wait_all(
        {id}, [](const Ticket& t) { return t.awaiting == Awaiting::escalation; }, 90s));
    const auto took = std::chrono::steady_clock::now() - started;
    repo.stop(daemon);
    WARN(program << ": escalated " << std::chrono::duration<double>(took).count()
                 << " s after the daemon started, after " << repo.finished_runs(id).size()
                 << " run(s)");
    CHECK(took < 60s);
    const std::string notes = notes_of(repo.ticket(id));
    INFO(notes);
    CHECK(notes.find(program == "claude" ? "Unable to connect to API (ConnectionRefused)"
                                         : "Connection failed") != std::string::npos);
}

TEST_CASE("a refused credential escalates after one attempt, in the CLI's own words") {
    const std::string program = GENERATE(as<std::string>{}, "claude", "codex");
    CAPTURE(program);
    if (!installed(program)) return;
    ModelStandin model{ModelStandin::Mode::unauthorized};
    Repo repo;
    std::vector<std::string> env;
    if (program == "codex") {
        use_codex(repo);
        configure_codex(repo, model.port());
        env = {"OPENAI_API_KEY=sk-wrong"};
    } else {
        env = {"ANTHROPIC_BASE_URL=http://127.0.0.1:" + std::to_string(model.port()),
               "ANTHROPIC_API_KEY=sk-ant-wrong"};
    }
    const std::string id = repo.create("Retry uploads");
    Child daemon = repo.daemon(env);
    INFO(daemon.stderr_text());
    REQUIRE(repo.wait_all(
        {id}, [](const Ticket& t) { return t.awaiting == Awaiting::escalation; }, 120s));
    repo.stop(daemon);
    const auto runs = repo.finished_runs(id);
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].permanent);
    CHECK_FALSE(runs[0].error.empty());
    const std::string notes = notes_of(repo.ticket(id));
    INFO(notes);
    CHECK(notes.find(runs[0].error) != std::string::npos);
    CHECK(notes.find("retrying cannot fix") != std::string::npos);
}

TEST_CASE("a usage error escalates after one attempt, in the CLI's own words") {
    const std::string program = GENERATE(as<std::string>{}, "claude", "codex");
    CAPTURE(program);
    if (!installed(program)) return;
    ModelStandin model;
    Repo repo;
    std::string yaml = read_file(repo.root / "board.yaml");
    const std::string line = "    command: [claude]";
    yaml.replace(yaml.find(line), line.size(), "    command: [" + program + ", --frobnicate]");
    write_file(repo.root / "board.yaml", yaml);
    if (program == "codex") configure_codex(repo, model.port());
    const std::string id = repo.create("Retry uploads");
    Child daemon =
        repo.daemon({"ANTHROPIC_BASE_URL=http://127.0.0.1:" + std::to_string(model.port()),
                     "ANTHROPIC_API_KEY=sk-ant-test",
                     "OPENAI_API_KEY=sk-test"});
    INFO(daemon.stderr_text());
    REQUIRE(repo.wait_all(
        {id}, [](const Ticket& t) { return t.awaiting == Awaiting::escalation; }, 120s));
    repo.stop(daemon);
    const auto runs = repo.finished_runs(id);
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].permanent);
    CHECK(runs[0].error.find("--frobnicate") != std::string::npos);
    INFO(runs[0].error);
}
