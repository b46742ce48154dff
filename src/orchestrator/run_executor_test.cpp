// One run through the executor with a scripted agent in place of a process: the prompt it is
// given, the draft it leaves taken as the artifact, its notes, and an interruption.

#include "orchestrator/run_executor.hpp"

#include "orchestrator/run_folder.hpp"
#include "orchestrator/settings_guard.hpp"
#include "orchestrator/state_members.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

#include <board/board_config.hpp>
#include <board/sandbox.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace board;
using namespace board::orchestrator;

namespace {

/// What the scripted agent does when run, and what it was given.
struct Script {
    std::string output;        ///< what it prints
    std::string draft;         ///< written to $BOARD_ARTIFACT when not empty
    std::string note;          ///< a line for $BOARD_RUN_DIR/notes.jsonl when not empty
    bool interrupted = false;  ///< as if the daemon stopped it
    LaunchSpec seen;           ///< the launch it was asked for
};

std::string env_of(const LaunchSpec& spec, const std::string& key) {
    for (const auto& [k, v] : spec.env)
        if (k == key) return v;
    return {};
}

class ScriptedRun final : public AgentRun {
public:
    explicit ScriptedRun(Script& script)
        : script_(script) {}

    asio::awaitable<ProcessOutcome> run(LaunchSpec spec) override {
        if (!script_.draft.empty())
            REQUIRE(write_file_atomically(env_of(spec, "BOARD_ARTIFACT"), script_.draft).empty());
        if (!script_.note.empty())
            REQUIRE(write_file_atomically(fs::path{env_of(spec, "BOARD_RUN_DIR")} / "notes.jsonl",
                                          script_.note)
                        .empty());
        OutputCapture capture{spec.reader};
        capture.feed(script_.output);
        ProcessOutcome outcome;
        outcome.interrupted = script_.interrupted;
        outcome.output = capture.finish(0);
        script_.seen = std::move(spec);
        co_return outcome;
    }

    void interrupt(std::chrono::milliseconds) override {}

    void kill_now() override {}

    const std::string& last_line() const override { return last_; }

private:
    Script& script_;
    std::string last_;
};

struct Fixture {
    fs::path root = fs::temp_directory_path() / ("board-executor-" + std::to_string(::getpid()));
    BoardConfig config =
        parse_board_config("agents:\n  default:\n    command: [scripted]\n    dialect: generic\n")
            .value();
    PromptTemplates templates = std::get<PromptTemplates>(load_prompt_templates(root));
    asio::io_context io;
    RunContext context;
    Ticket ticket;

    Fixture() {
        fs::create_directories(root / "tickets" / "P-1");
        context.board_root = root;
        context.config = &config;
        context.templates = &templates;
        context.executor = io.get_executor();
        ticket.id = "P-1";
        ticket.title = "Retry uploads";
        ticket.status = Status::research;
    }

    ~Fixture() {
        std::error_code ec;
        fs::remove_all(root, ec);
    }

    std::optional<RunRecord> run(Script& script) {
        std::optional<RunRecord> record;
        StartedRun started{std::make_shared<ScriptedRun>(script), Status::research, "0001"};
        asio::co_spawn(
            io,
            [&]() -> asio::awaitable<void> {
                record = co_await execute_run(context, "P-1", ticket, started);
            },
            [](std::exception_ptr e) {
                if (e) std::rethrow_exception(e);
            });
        io.run();
        io.restart();
        return record;
    }
};

}  // namespace

TEST_CASE("a run gets its prompt and folder, and its draft and notes are taken back",
          "[executor]") {
    Fixture f;
    Script script;
    script.output = "Looked around.\n<promise>COMPLETE: researched</promise>\n";
    script.draft = "---\nstatus: complete\nsummary: three findings\n---\n# Findings\n";
    script.note = "{\"text\": \"the upload client retries nothing today\"}\n";
    const auto record = f.run(script);
    REQUIRE(record);
    CHECK(record->run_id == "0001");
    CHECK(record->phase == Status::research);
    CHECK_THAT(record->output.report.message, Catch::Contains("COMPLETE: researched"));
    CHECK(record->agent_notes ==
          std::vector<std::string>{"the upload client retries nothing today"});
    REQUIRE(record->artifact);
    CHECK(record->artifact->front_matter.summary == "three findings");
    CHECK(read_whole_file(f.root / "tickets" / "P-1" / "research.md") == script.draft);

    // What it was given: argv from the dialect, the prompt on stdin, its own folder.
    CHECK(script.seen.argv.front() == "scripted");
    CHECK_THAT(read_whole_file(script.seen.stdin_file).value_or(""),
               Catch::Contains("Retry uploads"));
    CHECK(env_of(script.seen, "BOARD_TICKET") == "P-1");
    CHECK(fs::path{env_of(script.seen, "BOARD_RUN_DIR")}.filename() == "0001-research");
}

TEST_CASE("an interrupted run gives no record: the daemon records the interruption", "[executor]") {
    Fixture f;
    Script script;
    script.output = "<promise>COMPLETE</promise>\n";
    script.interrupted = true;
    CHECK_FALSE(f.run(script));
}

TEST_CASE("a confined agent reads no terminal, and still reads and writes /dev/null",
          "[executor][sandbox]") {
    if (landlock_abi() == 0) {
        WARN("this kernel has no Landlock: the sandbox is off here, nothing to test");
        return;
    }
    const board::testing::TempDir scratch{"board-tty-"};
    const SharedConfinement shared = shared_confinement(scratch.path());
    const auto& hidden = shared.rules.hidden;
    CHECK(std::find(hidden.begin(), hidden.end(), fs::path{"/dev/pts"}) != hidden.end());
    // /dev/pts/ptmx is there wherever terminals are: it stands for a person's terminal.
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (!confine_self(shared.rules).empty()) ::_exit(100);
        const int terminal = ::open("/dev/pts/ptmx", O_RDONLY | O_NOCTTY | O_CLOEXEC);
        if (terminal >= 0 || errno != EACCES) ::_exit(1);
        const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
        ::_exit(null >= 0 ? 0 : 2);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

namespace {

/// The permission bits of `file` (through a link), or 0 when it cannot be statted.
unsigned permission_bits(const fs::path& file) {
    struct stat st {};

    return ::stat(file.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

}  // namespace

TEST_CASE("settings that name programs are put back after a run, the changed text kept",
          "[executor][sandbox]") {
    const board::testing::TempDir scratch{"board-guard-"};
    const fs::path& dir = scratch.path();
    fs::create_directories(dir / "run");
    fs::create_directories(dir / "dotfiles");
    const fs::path settings = dir / "settings.json";
    const fs::path config = dir / "config.toml";
    const fs::path linked = dir / "linked.json";  // a dotfiles manager's link
    const fs::path kept = dir / "settings-before.json";
    // Owner only, as settings holding a key often are: put back the same way.
    write_file_atomically(settings, "{\"theme\":\"dark\"}\n", Durability::synced, 0600);
    write_file_atomically(dir / "dotfiles" / "linked.json", "{}\n");
    fs::create_symlink(dir / "dotfiles" / "linked.json", linked);
    const std::string hook = R"({"hooks":{"SessionStart":[{"command":"sh /tmp/x"}]}})";
    auto guard =
        std::make_shared<SettingsGuard>(std::vector<fs::path>{settings, config, linked}, kept);
    {
        SettingsGuard::Run first{guard};
        CHECK(fs::exists(kept));  // on disk while the run goes on
        // The agent adds a hook, makes a config naming a notify program, and replaces the
        // link (whose target it cannot write) with a file of its own.
        write_file_atomically(settings, hook);
        write_file_atomically(config, "notify = [\"sh\", \"/tmp/x\"]\n");
        fs::remove(linked);
        write_file_atomically(linked, hook);
        {
            // A second run begins meanwhile: it puts back what was there before the first.
            SettingsGuard::Run second{guard};
            const auto lines = second.put_back(dir / "run");
            REQUIRE(lines.size() == 3);
            CHECK_THAT(lines[0],
                       Catch::Contains("settings.json was changed during an agent's "
                                       "run: put back"));
        }
        CHECK(read_whole_file(settings) == "{\"theme\":\"dark\"}\n");
        CHECK(permission_bits(settings) == 0600);
        CHECK_FALSE(fs::exists(config));
        CHECK(fs::is_symlink(linked));
        CHECK(fs::read_symlink(linked) == dir / "dotfiles" / "linked.json");
        CHECK(read_whole_file(dir / "run" /
                              ("changed-" + dir.filename().string() + "-settings.json")) == hook);
        CHECK(first.put_back(dir / "run").empty());  // as it was: nothing to say
    }
    CHECK(fs::exists(kept));  // kept until the daemon has no run going
    guard->settle();
    CHECK_FALSE(fs::exists(kept));

    // A daemon killed during a run: the next one puts back what the kept file says.
    {
        auto dying = std::make_shared<SettingsGuard>(std::vector<fs::path>{settings}, kept);
        SettingsGuard::Run run{dying};
        write_file_atomically(settings, hook);
        (void)run.put_back(dir / "unused");  // lets go of the kept file at its end
        write_file_atomically(settings, hook);
        fs::copy_file(kept, dir / "left-behind.json");  // what a killed daemon leaves
    }
    fs::rename(dir / "left-behind.json", kept);
    SettingsGuard next{{settings}, kept};
    const auto recovered = next.recover(dir / "changed");
    REQUIRE(recovered.size() == 1);
    CHECK(read_whole_file(settings) == "{\"theme\":\"dark\"}\n");
    const std::string changed_name = "changed-" + dir.filename().string() + "-settings.json";
    CHECK(read_whole_file(dir / "changed" / changed_name) == hook);
    CHECK_FALSE(fs::exists(kept));
}

TEST_CASE("Claude's state: only its MCP servers and approvals are put back, through a link",
          "[executor][sandbox]") {
    const board::testing::TempDir scratch{"board-guard-"};
    const fs::path& dir = scratch.path();
    fs::create_directories(dir / "run");
    fs::create_directories(dir / "dotfiles");
    const fs::path target = dir / "dotfiles" / "claude.json";
    const fs::path state = dir / ".claude.json";  // a dotfiles manager's link, as some keep it
    const fs::path kept = dir / "settings-before.json";
    const std::string before =
        R"({"numStartups":3,"mcpServers":{"mine":{"command":"my-server"}},)"
        R"("projects":{"/home/p/app":{"history":[{"display":"\ud83d"}],"mcpServers":{}}},)"
        R"("oauthAccount":{"emailAddress":"p@example.com"}})";
    REQUIRE(write_file_atomically(target, before, Durability::synced, 0600).empty());
    fs::create_symlink(target, state);
    auto guard = std::make_shared<SettingsGuard>(
        std::vector<fs::path>{}, kept, std::vector<fs::path>{state});
    {
        SettingsGuard::Run run{guard};
        // Kept on disk while the run goes on: the guarded members alone, not the account.
        const auto kept_text = read_whole_file(kept);
        REQUIRE(kept_text);
        CHECK(kept_text->find("my-server") != std::string::npos);
        CHECK(kept_text->find("oauthAccount") == std::string::npos);
        CHECK(kept_text->find("numStartups") == std::string::npos);

        // The tool's own bookkeeping during the run: nothing to put back, the file untouched.
        const std::string counted =
            std::string{before}.replace(before.find("\"numStartups\":3"), 15, "\"numStartups\":4");
        REQUIRE(write_file_atomically(target, counted, Durability::synced, 0600).empty());
        CHECK(run.put_back(dir / "run").empty());
        CHECK(read_whole_file(target) == counted);

        // The agent adds a server of the user's and trusts its worktree's `.mcp.json`.
        const std::string planted =
            R"({"numStartups":5,"mcpServers":{"mine":{"command":"my-server"},)"
            R"("evil":{"command":"sh"}},"projects":{"/home/p/app":{)"
            R"("history":[{"display":"\ud83d"}],"mcpServers":{}},)"
            R"("/work/tree":{"enableAllProjectMcpServers":true,)"
            R"("hasTrustDialogAccepted":true}},)"
            R"("oauthAccount":{"emailAddress":"p@example.com"}})";
        REQUIRE(write_file_atomically(target, planted).empty());  // and opens it to others
        const auto lines = run.put_back(dir / "run");
        REQUIRE(lines.size() == 1);
        CHECK_THAT(lines[0], Catch::Contains("MCP servers or project approvals were changed"));
    }
    CHECK(fs::is_symlink(state));
    CHECK(permission_bits(target) == 0600);
    const auto text = read_whole_file(target);
    REQUIRE(text);
    CHECK(read_members(*text, claude_state_members()) ==
          read_members(before, claude_state_members()));
    // What the tool wrote meanwhile stays, byte for byte.
    CHECK(text->find(R"("numStartups":5)") != std::string::npos);
    CHECK(text->find(R"("history":[{"display":"\ud83d"}])") != std::string::npos);
    CHECK(text->find(R"("/work/tree":{"enableAllProjectMcpServers":false,)"
                     R"("hasTrustDialogAccepted":false})") != std::string::npos);
    // The changed members are kept for the person, and nothing else of the file.
    const auto changed =
        read_whole_file(dir / "run" / ("changed-" + dir.filename().string() + "-.claude.json"));
    REQUIRE(changed);
    CHECK(changed->find(R"("evil":{"command":"sh"})") != std::string::npos);
    CHECK(changed->find("oauthAccount") == std::string::npos);

    // Text the guard cannot read (the agent's, or a file grown past what is read) is never
    // left to the tool: set aside whole, and a file of the members as they were put in place.
    {
        SettingsGuard::Run run{guard};
        REQUIRE(write_file_atomically(target, "{\"mcpServers\":{\"e\":{}}} trailing").empty());
        const auto lines = run.put_back(dir / "run");
        REQUIRE(lines.size() == 1);
        CHECK_THAT(lines[0], Catch::Contains("could not be checked"));
        const auto aside = std::find_if(
            fs::directory_iterator{target.parent_path()}, fs::directory_iterator{}, [](auto& e) {
                return e.path().filename().string().starts_with("claude.json.unchecked-by-board-");
            });
        REQUIRE(aside != fs::directory_iterator{});
        CHECK(read_whole_file(aside->path()) == "{\"mcpServers\":{\"e\":{}}} trailing");
        CHECK(read_whole_file(target) == R"({"mcpServers":{"mine":{"command":"my-server"}}})");
        CHECK(fs::is_symlink(state));  // the person's link, still leading there
    }
    // A link turned elsewhere is not written through: it is replaced by a file.
    {
        SettingsGuard::Run run{guard};
        const fs::path elsewhere = dir / "elsewhere.json";
        REQUIRE(write_file_atomically(elsewhere, R"({"mcpServers":{"evil":{}}})").empty());
        fs::remove(state);
        fs::create_symlink(elsewhere, state);
        CHECK(run.put_back(dir / "run").size() == 1);
        CHECK_FALSE(fs::is_symlink(state));
        CHECK(read_whole_file(state) == R"({"mcpServers":{"mine":{"command":"my-server"}}})");
        CHECK(read_whole_file(elsewhere) == R"({"mcpServers":{"evil":{}}})");
    }
    guard->settle();

    // A file that appears during a run holds nothing to run either.
    fs::remove(state);
    {
        SettingsGuard::Run run{guard};
        REQUIRE(write_file_atomically(state, R"({"mcpServers":{"e":{"command":"sh"}}})").empty());
        CHECK(run.put_back(dir / "run").size() == 1);
        CHECK(read_whole_file(state) == R"({"mcpServers":{}})");
    }
}

TEST_CASE("Claude's state the guard cannot read is neither stripped nor written over",
          "[executor][sandbox]") {
    const board::testing::TempDir scratch{"board-guard-"};
    const fs::path& dir = scratch.path();
    const fs::path state = dir / ".claude.json";
    const fs::path kept = dir / "settings-before.json";
    auto guard = std::make_shared<SettingsGuard>(
        std::vector<fs::path>{}, kept, std::vector<fs::path>{state});
    // Unreadable when the runs begin (a torn write, say): no baseline, so nothing stripped
    // from what the person has, and the put-back says it did not check.
    REQUIRE(write_file_atomically(state, R"({"mcpServers":{"mine":{}})").empty());
    {
        SettingsGuard::Run run{guard};
        REQUIRE(write_file_atomically(state, R"({"mcpServers":{"mine":{}}})").empty());
        const auto lines = run.put_back(dir / "changed");
        REQUIRE(lines.size() == 1);
        CHECK_THAT(lines[0], Catch::Contains("could not be read when the runs began"));
        CHECK(read_whole_file(state) == R"({"mcpServers":{"mine":{}}})");
    }
    guard->settle();

    // A folder put in its place during a run: set aside, not written over, and a file of the
    // members as they were made.
    {
        SettingsGuard::Run run{guard};
        fs::remove(state);
        fs::create_directories(state / "inside");
        const auto lines = run.put_back(dir / "changed");
        REQUIRE(lines.size() == 1);
        CHECK_THAT(lines[0], Catch::Contains("could not be checked"));
        CHECK(read_whole_file(state) == R"({"mcpServers":{"mine":{}}})");
    }
    guard->settle();

    // Only its mode opened to others: closed again.
    REQUIRE(write_file_atomically(state, R"({"mcpServers":{"mine":{}}})", Durability::synced, 0600)
                .empty());
    {
        SettingsGuard::Run run{guard};
        fs::permissions(state, static_cast<fs::perms>(0666));
        const auto lines = run.put_back(dir / "changed");
        REQUIRE(lines.size() == 1);
        CHECK_THAT(lines[0], Catch::Contains("its mode was changed"));
        CHECK(permission_bits(state) == 0600);
    }
}

TEST_CASE("settings that could not be put back stay owed until a later run puts them back",
          "[executor][sandbox]") {
    const board::testing::TempDir scratch{"board-owed-"};
    const fs::path& dir = scratch.path();
    fs::create_directories(dir / "tool");
    const fs::path settings = dir / "tool" / "settings.json";
    const fs::path kept = dir / "settings-before.json";
    write_file_atomically(settings, "{}\n");
    NamedProgramPlaces places;  // the agents may write where the tool's folder is
    places.writable = {fs::canonical(dir)};
    auto guard = std::make_shared<SettingsGuard>(
        std::vector<fs::path>{settings}, kept, std::vector<fs::path>{}, places);
    {
        SettingsGuard::Run run{guard};
        // The agent puts a file where the tool's folder was: nothing can be written there.
        fs::remove_all(dir / "tool");
        write_file_atomically(dir / "tool", "in the way\n");
        const auto lines = run.put_back(dir / "run");
        REQUIRE(lines.size() == 1);
        const std::string folder = (fs::canonical(dir) / "tool").string();
        CHECK_THAT(lines[0],
                   Catch::Contains("settings.json was not put back: the folder it was in (" +
                                   folder + ") is not there (" + folder +
                                   " is not a folder) after an agent's run; it is tried again"));
    }
    CHECK(fs::exists(kept));  // still owed, on disk too
    fs::remove(dir / "tool");
    fs::create_directories(dir / "tool");
    {
        // The next run does not take the settings afresh (absent now): it puts them back.
        SettingsGuard::Run run{guard};
        const auto lines = run.put_back(dir / "run");
        REQUIRE(lines.size() == 1);
        CHECK_THAT(lines[0], Catch::Contains("put back"));
    }
    CHECK(read_whole_file(settings) == "{}\n");
    guard->settle();
    CHECK_FALSE(fs::exists(kept));
}

TEST_CASE("runs one after another keep one baseline, and a person's change between runs is taken",
          "[executor][sandbox]") {
    const board::testing::TempDir scratch{"board-baseline-"};
    const fs::path& dir = scratch.path();
    const fs::path settings = dir / "settings.json";
    write_file_atomically(settings, "{}\n");
    const fs::path kept = settings_kept_file(dir);
    REQUIRE(kept == dir / ".board" / "guard" / "settings-before.json");
    CHECK((fs::status(kept.parent_path()).permissions() & fs::perms::all) == fs::perms::owner_all);
    const auto inode = [](const fs::path& p) {
        struct stat st {};
        return ::stat(p.c_str(), &st) == 0 ? st.st_ino : ino_t{0};
    };
    const auto listing_of_board = [&] {
        struct stat st {};
        ::stat((dir / ".board").c_str(), &st);
        return std::pair{st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
    };
    auto guard = std::make_shared<SettingsGuard>(std::vector<fs::path>{settings}, kept);
    const auto board_before = listing_of_board();
    const auto run_through = [&] {
        SettingsGuard::Run run{guard};
        CHECK(run.put_back(dir / "run").empty());
    };
    run_through();
    const ino_t taken = inode(kept);
    REQUIRE(taken != 0);
    run_through();
    CHECK(inode(kept) == taken);  // the same settings: not written again
    // The agents' reading rules list `.board` (it holds the page's token): runs leave it be.
    CHECK(listing_of_board() == board_before);

    // A person changes the settings between runs: the next run's baseline is theirs.
    write_file_atomically(settings, "{\"theme\":\"light\"}\n");
    {
        SettingsGuard::Run third{guard};
        CHECK(inode(kept) != taken);
        write_file_atomically(settings, R"({"hooks":{}})");
        CHECK(third.put_back(dir / "run").size() == 1);
    }
    CHECK(read_whole_file(settings) == "{\"theme\":\"light\"}\n");
    {
        SettingsGuard::Run going{guard};
        guard->settle();  // a run holds it: nothing is forgotten
        CHECK(fs::exists(kept));
        (void)going.put_back(dir / "run");
    }
    guard->settle();
    CHECK_FALSE(fs::exists(kept));

    // A file an older daemon that died during a run kept directly in `.board/` is put back.
    write_file_atomically(settings, R"({"hooks":{}})");
    write_file_atomically(
        dir / ".board" / "settings-before.json",
        R"([{"path":")" + settings.string() + R"(","kind":"file","content":"{}\n"}])");
    SettingsGuard next{{settings}, kept};
    CHECK(next.recover(dir / "changed").size() == 1);
    CHECK(read_whole_file(settings) == "{}\n");
    CHECK_FALSE(fs::exists(dir / ".board" / "settings-before.json"));
    CHECK_FALSE(fs::exists(kept));
}

TEST_CASE("the tools' state folders are made before a first confined run, owner only",
          "[executor][sandbox]") {
    const board::testing::TempDir scratch{"board-home-"};
    const fs::path& home = scratch.path();
    fs::create_directories(home / "board");
    const std::string saved = std::getenv("HOME") ? std::getenv("HOME") : "";
    ::setenv("HOME", home.c_str(), 1);
    const SharedConfinement shared = shared_confinement(home / "board");
    ::setenv("HOME", saved.c_str(), 1);
    for (const char* state : {".claude", ".codex"}) {
        CAPTURE(state);
        CHECK(fs::is_directory(home / state));
        CHECK((fs::status(home / state).permissions() & fs::perms::all) == fs::perms::owner_all);
        const auto& writable = shared.rules.writable;
        CHECK(std::find(writable.begin(), writable.end(), fs::canonical(home / state)) !=
              writable.end());
    }
}

TEST_CASE("a run's places are named as they are on disk, whatever links lead to them",
          "[executor][sandbox]") {
    // The hidden files are kept out by comparing paths: a place must be named without links.
    const board::testing::TempDir scratch{"board-places-"};
    const fs::path real = fs::canonical(scratch.path()) / "real";
    const fs::path run = fs::path{"tickets"} / "T-1" / "runs" / "0001-research";
    fs::create_directories(real / "board" / run);
    fs::create_directory_symlink(real, scratch.path() / "link");
    fs::create_directory_symlink(real / "board", scratch.path() / "board-link");
    for (const fs::path& board :
         {scratch.path() / "link" / "board", scratch.path() / "board-link", real / "board"}) {
        CAPTURE(board);
        const SharedConfinement shared = shared_confinement(board);
        CHECK(shared.board == real / "board");
        LaunchSpec spec;
        // Spelled with a trailing separator and a step back, as a caller might.
        const fs::path spelled =
            board / "tickets" / "T-1" / "runs" / ".." / "runs" / "0001-research" / "";
        const Confinement own = confinement_for(shared, {spelled, board, false, {}, {}}, spec);
        REQUIRE_FALSE(own.writable.empty());
        CHECK(own.writable.front() == real / "board" / run);
    }
}

TEST_CASE("a worktree's git folder is found even when its gitdir was rewritten, or relative",
          "[executor][sandbox]") {
    const board::testing::TempDir scratch{"board-wt-"};
    const fs::path& repo = scratch.path();
    const std::string git = "git -C '" + repo.string() + "' -c user.name=a -c user.email=a@x ";
    REQUIRE(std::system((git + "init -q -b main && " + git + "commit -q --allow-empty -m init && " +
                         git + "worktree add -q .board/worktrees/T-1 -b board/T-1 >/dev/null 2>&1")
                            .c_str()) == 0);
    const fs::path worktree = repo / ".board" / "worktrees" / "T-1";
    const fs::path admin = fs::canonical(repo / ".git" / "worktrees" / "T-1");
    REQUIRE(worktree_admin_dir(worktree, repo / ".git") == admin);
    // Relative, as git 2.48's worktree.useRelativePaths writes it.
    write_file_atomically(admin / "gitdir", "../../../.board/worktrees/T-1/.git\n");
    CHECK(worktree_admin_dir(worktree, repo / ".git") == admin);
    CHECK(restore_worktree_links(worktree, admin).empty());  // relative is as good
    // Rewritten by an agent: found by its name, and put back.
    write_file_atomically(admin / "gitdir", "/elsewhere/.git\n");
    REQUIRE(worktree_admin_dir(worktree, repo / ".git") == admin);
    const auto lines = restore_worktree_links(worktree, admin);
    REQUIRE(lines.size() == 1);
    CHECK_THAT(lines[0], Catch::Contains("gitdir was rewritten: put back"));
    CHECK(std::system(
              ("git -C '" + worktree.string() + "' status --short >/dev/null 2>&1").c_str()) == 0);
}
