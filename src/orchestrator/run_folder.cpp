#include "orchestrator/run_folder.hpp"

#include "http/security.hpp"
#include "orchestrator/strays.hpp"
#include "support/files.hpp"
#include "support/process.hpp"
#include "support/unique_fd.hpp"

#include <board/artifact.hpp>
#include <board/board_dir.hpp>

#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/syscall.h>
#include <unistd.h>

namespace board::orchestrator {

namespace asio = boost::asio;
namespace fs = std::filesystem;

std::string read_small_file(const fs::path& file, std::size_t max_bytes) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return {};
    // Grown as the file is read, never to `max_bytes` up front: zero-filling a 64 MB limit
    // for a 2 KB artifact put 64 MB on the daemon's peak memory per disk thread.
    std::string text;
    char chunk[16384];
    while (text.size() < max_bytes && in) {
        in.read(chunk,
                static_cast<std::streamsize>(std::min(sizeof chunk, max_bytes - text.size())));
        text.append(chunk, static_cast<std::size_t>(in.gcount()));
    }
    return text;
}

std::string artifact_file_name(Status phase) {
    const auto kind = artifact_of(phase);
    return kind ? std::string{to_string(*kind)} + ".md" : std::string{};
}

namespace {

fs::path resolved(const fs::path& p) {
    // A path with no link on it is its own canonical form once normalized: one call says so,
    // where resolving it takes a stat and a readlink per component.
    if (p.is_absolute()) {
        const UniqueFd held{open_with_no_link_on_the_way(p, O_PATH)};
        if (held) {
            fs::path normal = p.lexically_normal();
            // As weakly_canonical gives it: no trailing separator.
            if (normal.has_relative_path() && !normal.has_filename()) normal = normal.parent_path();
            return normal;
        }
    }
    std::error_code ec;
    auto real = fs::weakly_canonical(p, ec);
    return ec ? p.lexically_normal() : real;
}

}  // namespace

SharedConfinement shared_confinement(const fs::path& board_root) {
    SharedConfinement shared;
    shared.board = resolved(board_root);
    std::vector<fs::path> candidates{"/var/tmp", "/dev/shm"};
    for (const char* device :
         {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"})
        candidates.emplace_back(device);
    // Each tool's own state, nothing broader (~/.local/bin and ~/.config would let an
    // agent plant a program or a git hook that later runs unconfined).
    const char* home = std::getenv("HOME");
    if (home && *home) {
        // A tool run for the first time makes its folder in HOME, which a confined agent
        // cannot: Codex then fails with "failed to initialize rollout recorder: Permission
        // denied", retried as if transient. Made here, as the tool would (owner only).
        for (const char* state : {".claude", ".codex"}) {
            std::error_code ec;
            const fs::path folder = fs::path{home} / state;
            if (!fs::exists(fs::symlink_status(folder, ec)) && fs::create_directory(folder, ec))
                fs::permissions(folder, fs::perms::owner_all, ec);
        }
        for (const char* state : {".claude",
                                  ".claude.json",
                                  ".codex",
                                  ".gemini",
                                  ".npm",
                                  ".cache/claude",
                                  ".cache/codex"})
            candidates.push_back(fs::path{home} / state);
    }
    for (const char* var : {"CLAUDE_CONFIG_DIR", "CODEX_HOME"}) {
        if (const char* dir = std::getenv(var); dir && *dir) candidates.emplace_back(dir);
    }
    // Of that state, the settings that name programs (hooks, notify commands, MCP servers).
    std::vector<fs::path> settings;
    if (home && *home) {
        for (const char* file : {".claude/settings.json",
                                 ".claude/settings.local.json",
                                 ".codex/config.toml",
                                 ".gemini/settings.json"})
            settings.push_back(fs::path{home} / file);
    }
    if (const char* dir = std::getenv("CLAUDE_CONFIG_DIR"); dir && *dir)
        settings.push_back(fs::path{dir} / "settings.json");
    if (const char* dir = std::getenv("CODEX_HOME"); dir && *dir)
        settings.push_back(fs::path{dir} / "config.toml");
    for (const auto& file : settings)
        if (file.is_absolute()) shared.guarded.push_back(file.lexically_normal());
    // Claude Code's state, and the older name it still prefers when that file exists (in its
    // own folder, which an agent may write).
    std::vector<fs::path> states;
    if (home && *home) {
        states.push_back(fs::path{home} / ".claude.json");
        states.push_back(fs::path{home} / ".claude" / ".config.json");
    }
    if (const char* dir = std::getenv("CLAUDE_CONFIG_DIR"); dir && *dir) {
        states.push_back(fs::path{dir} / ".claude.json");
        states.push_back(fs::path{dir} / ".config.json");
    }
    for (const auto& file : states)
        if (file.is_absolute()) shared.guarded_members.push_back(file.lexically_normal());
    const fs::path tmp = resolved(fs::temp_directory_path());
    // The board lives in temp: each run gets a temp folder of its own instead.
    shared.own_tmp = path_is_within(shared.board, tmp);
    if (!shared.own_tmp) candidates.push_back(tmp);
    // Inside the board only a run's own places (confinement_for); nothing that holds it.
    for (const auto& c : candidates) {
        if (!c.is_absolute()) continue;
        const fs::path path = resolved(c);
        if (path_is_within(shared.board, path) || path_is_within(path, shared.board)) continue;
        shared.rules.writable.push_back(path);
    }
    shared.rules.hidden = {resolved(board_root / ".board" / "http-token")};
    // Terminals: reading a person's terminal races their shell for what they type (a sudo
    // password); the virtual consoles' memory shows their screens. No agent needs either:
    // each runs in a session of its own with no controlling terminal.
    shared.rules.hidden.emplace_back("/dev/pts");
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/dev", ec)) {
        const std::string name = entry.path().filename().string();
        if (name == "console" || name.starts_with("tty") || name.starts_with("vcs"))
            shared.rules.hidden.push_back(entry.path());
    }
    return shared;
}

namespace {

/// The place a git link file names (`.git`'s `gitdir: X`, `gitdir`, `commondir`): its one line
/// after `prefix`, relative to the file's own folder when relative (git 2.48's
/// worktree.useRelativePaths), resolved. None when it is no regular file or names nothing.
std::optional<fs::path> linked_path(const fs::path& file, std::string_view prefix) {
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(file, ec))) return std::nullopt;
    const auto text = read_whole_file(file, AT_FDCWD, 4096);
    if (!text || text->rfind(prefix, 0) != 0) return std::nullopt;
    std::string named = text->substr(prefix.size());
    while (!named.empty() && (named.back() == '\n' || named.back() == '\r')) named.pop_back();
    if (named.empty()) return std::nullopt;
    fs::path path{named};
    if (path.is_relative()) path = file.parent_path() / path;
    return resolved(path);
}

}  // namespace

std::optional<fs::path> worktree_admin_dir(const fs::path& worktree, const fs::path& git_dir) {
    const fs::path dot_git = resolved(worktree / ".git");
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(git_dir / "worktrees", ec)) {
        if (!entry.is_directory(ec) || entry.is_symlink(ec)) continue;
        if (linked_path(entry.path() / "gitdir", "") == dot_git) return resolved(entry.path());
    }
    // None names it: its own folder's `gitdir` may have been rewritten by the agent of a run
    // killed with the daemon. git names that folder after the worktree, which no agent can
    // add to `worktrees/`.
    const fs::path by_name = git_dir / "worktrees" / worktree.filename();
    const auto status = fs::symlink_status(by_name, ec);
    if (fs::is_directory(status)) return resolved(by_name);
    return std::nullopt;
}

std::vector<std::string> restore_worktree_links(const fs::path& worktree, const fs::path& admin) {
    std::vector<std::string> restored;
    // A link holds when it names the right place, however git spelled it.
    const auto points_to = [](const fs::path& file, std::string_view prefix, const fs::path& to) {
        return linked_path(file, prefix) == resolved(to);
    };
    const auto put_back = [&](const fs::path& file, const std::string& text) {
        std::error_code ec;
        if (fs::is_directory(fs::symlink_status(file, ec))) fs::remove_all(file, ec);
        const auto failed = write_file_atomically(file, text);
        restored.push_back(
            failed.empty() ? file.string() + " was rewritten: put back as git made it"
                           : file.string() + " was rewritten and could not be put back: " + failed);
    };
    const fs::path git_dir = admin.parent_path().parent_path();
    if (!points_to(worktree / ".git", "gitdir: ", admin))
        put_back(worktree / ".git", "gitdir: " + admin.string() + "\n");
    if (!points_to(admin / "gitdir", "", worktree / ".git"))
        put_back(admin / "gitdir", (worktree / ".git").string() + "\n");
    if (!points_to(admin / "commondir", "", git_dir)) put_back(admin / "commondir", "../..\n");
    std::error_code ec;
    if (fs::exists(fs::symlink_status(admin / "config.worktree", ec))) {
        fs::remove_all(admin / "config.worktree", ec);
        restored.push_back((admin / "config.worktree").string() +
                           " was made: removed (git would read it as the worktree's config)");
    }
    return restored;
}

Confinement confinement_for(const SharedConfinement& shared,
                            const ConfinementPlaces& places,
                            LaunchSpec& spec) {
    Confinement rules;
    rules.hidden = shared.rules.hidden;
    rules.writable.push_back(resolved(places.run_folder));
    if (places.writes_cwd) {
        rules.writable.push_back(resolved(places.cwd));
        // Commits write the repository's objects, refs and reflogs, and the worktree's own
        // git folder (HEAD, index), all found from the board's repository. Never its config,
        // info/ or hooks/: they name programs git runs for whoever uses the repository next
        // (a textconv in the daemon's `board diff`, a filter in its merge, a person's hook).
        if (!places.repository_git_dir.empty()) {
            const fs::path git_dir = resolved(places.repository_git_dir);
            std::error_code ec;
            fs::create_directories(git_dir / "logs", ec);  // a reflog's folder, made by git
            for (const char* part : {"objects", "refs", "logs"})
                rules.writable.push_back(git_dir / part);
            if (!places.worktree_admin.empty()) rules.writable.push_back(places.worktree_admin);
        }
    }
    if (shared.own_tmp) {
        const fs::path own_tmp = places.run_folder / "tmp";
        std::error_code ec;
        fs::create_directories(own_tmp, ec);
        spec.env.emplace_back("TMPDIR", own_tmp.string());
    }
    return rules;
}

namespace {

void read_artifact_into(RunRecord& record, const fs::path& dir, const std::string& name) {
    record.artifact_path = name;
    std::error_code ec;
    if (name.empty() || !fs::exists(dir / name, ec)) return;
    std::string error;
    record.artifact = read_artifact(dir / name, error);
    if (!record.artifact) record.artifact_error = error;
}

}  // namespace

/// After a run: the agent's draft becomes the ticket's artifact (when it changed), and
/// the notes it left are the agent's.
void take_agent_work(RunRecord& record,
                     const fs::path& dir,
                     const fs::path& work,
                     const std::string& artifact_name) {
    // The run folder is the agent's: a name there may be a link to anything. Only a
    // regular file with no other name is taken (read_confined), never followed.
    bool missing = false;
    std::string problem;
    if (!artifact_name.empty()) {
        const auto drafted = http::read_confined(work, artifact_name, 64u << 20, missing, problem);
        if (drafted && *drafted != read_small_file(dir / artifact_name, 64u << 20)) {
            if (auto failed = write_file_atomically(dir / artifact_name, *drafted); !failed.empty())
                record.artifact_error = "could not save the artifact: " + failed;
        } else if (!drafted && !missing) {
            record.artifact_error = "the draft was not taken: " + problem;
        }
    }
    if (const auto notes = http::read_confined(work, "notes.jsonl", 1u << 20, missing, problem))
        read_agent_notes(record, *notes);
    else if (!missing)
        record.output.report.warnings.push_back("notes.jsonl was not read: " + problem);
    read_artifact_into(record, dir, artifact_name);
}

/// `board note` inside a run leaves the agent's notes in its run folder (the log is not
/// the agent's to write): one JSON object per line, `{"text": ...}`.
void read_agent_notes(RunRecord& record, const std::string& file_text) {
    std::istringstream in(file_text);
    std::string line;
    int bad = 0;
    for (int number = 1; std::getline(in, line); ++number) {
        if (line.empty()) continue;
        boost::system::error_code parse_error;
        const auto value = boost::json::parse(line, parse_error);
        const auto* object = parse_error ? nullptr : value.if_object();
        const auto* text = object ? object->if_contains("text") : nullptr;
        if (text && text->is_string() && !text->get_string().empty()) {
            record.agent_notes.emplace_back(text->get_string());
        } else if (++bad <= 20) {
            record.output.report.warnings.push_back(
                fmt::format("notes.jsonl line {}: not a note (expected {{\"text\": ...}}); "
                            "ignored",
                            number));
        }
        if (record.agent_notes.size() >= 100) break;
    }
}

fs::path git_dir_of(const fs::path& board_root) {
    std::error_code ec;
    for (fs::path dir = fs::weakly_canonical(board_root, ec); !dir.empty();
         dir = dir.parent_path()) {
        if (fs::is_directory(dir / ".git", ec) && !fs::is_symlink(dir / ".git", ec))
            return dir / ".git";
        if (dir == dir.root_path()) break;
    }
    return {};
}

asio::awaitable<std::variant<fs::path, std::string>> ensure_worktree(asio::any_io_executor executor,
                                                                     const fs::path& board_root,
                                                                     const std::string& id,
                                                                     const fs::path& log_file) {
    const auto private_dir = private_folder(board_root);
    if (!private_dir) co_return private_dir.error().message;
    const fs::path path = worktree_dir(board_root, id);
    std::error_code ec;
    if (fs::exists(path / ".git", ec)) co_return path;
    fs::create_directories(path.parent_path(), ec);
    write_file_atomically(private_dir.value() / ".gitignore", "*\n");
    const std::string branch = ticket_branch(id);
    // git_argv: nothing the repository names runs as the daemon.
    const auto worktree_add = [&](std::vector<std::string> args) {
        args.insert(args.begin(), {"worktree", "add"});
        return git_argv(board_root, args);
    };
    LaunchSpec git;
    git.argv = worktree_add({"-B", branch, path.string()});
    // Reuse the branch if it exists (after a rejection), else branch from HEAD.
    LaunchSpec probe;
    probe.argv = git_argv(board_root, {"rev-parse", "--verify", "--quiet", "refs/heads/" + branch});
    probe.cwd = git.cwd = board_root;
    probe.log_file = git.log_file = log_file;
    probe.timeout = git.timeout = std::chrono::minutes{2};
    const auto prober = std::make_shared<AgentProcess>(executor);
    auto exists = co_await prober->run(probe);
    if (exists.launch_error.empty() && exists.exit_code == 0) {
        git.argv = worktree_add({path.string(), branch});
    }
    const auto maker = std::make_shared<AgentProcess>(executor);
    auto made = co_await maker->run(git);
    if (!made.launch_error.empty()) co_return "git worktree: " + made.launch_error;
    if (made.exit_code != 0)
        co_return fmt::format("git worktree add {} failed (exit {}); see {}",
                              path.string(),
                              made.exit_code,
                              log_file.string());
    co_return path;
}

bool AgentProcessFound::alive() const {
    return signal(0);
}

bool AgentProcessFound::signal(int signal) const {
    if (pidfd) return ::syscall(SYS_pidfd_send_signal, pidfd.get(), signal, nullptr, 0) == 0;
    return ::kill(pid, signal) == 0;
}

std::vector<AgentProcessFound> processes_with_a_board_run() {
    std::vector<AgentProcessFound> found;
    std::error_code ec;
    for (const auto& proc : fs::directory_iterator("/proc", ec)) {
        const std::string name = proc.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        AgentProcessFound process;
        process.pid = std::atoi(name.c_str());
        // Pinned before its environment is read, and checked alive after: a number that
        // changed hands meanwhile is never taken for the process whose environment was read.
        const long pidfd = ::syscall(SYS_pidfd_open, process.pid, 0);
        if (pidfd < 0 && errno == ESRCH) continue;  // ended already
        // Without a pidfd (no kernel support, no descriptor left) it goes by its number.
        process.pidfd.reset(static_cast<int>(pidfd));
        auto run = run_of_process(process.pid);
        if (run.empty() || !process.alive()) continue;
        process.ticket_dir = std::move(run.ticket_dir);
        process.run = std::move(run.run);
        found.push_back(std::move(process));
    }
    return found;
}

}  // namespace board::orchestrator
