#pragma once
// What a run is given and what it leaves behind: the folder a confined agent may write, the
// git worktree it implements in, its draft artifact and notes taken back after it ends, and
// the agents a dead daemon left running. The daemon's loop calls these; none of them decides
// anything about the ticket (run_outcome.hpp turns what is found into events).

#include "orchestrator/agent_process.hpp"
#include "orchestrator/run_outcome.hpp"
#include "support/unique_fd.hpp"

#include <board/sandbox.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace board::orchestrator {

/// At most `max_bytes` of `file`; empty when it cannot be read.
std::string read_small_file(const std::filesystem::path& file, std::size_t max_bytes = 256 * 1024);

/// The artifact a run of `phase` writes (`research.md`, `plan.md`), or empty.
std::string artifact_file_name(Status phase);

/// What every confined run of a board may write beyond its own places, and what none may
/// read, resolved (links followed) once, when the daemon starts: temp, the devices, each
/// tool's own state; never a folder that holds the board or lies inside it (those writes
/// would reach the logs). The HTTP token is unreadable.
struct SharedConfinement {
    Confinement rules;            ///< canonical paths
    std::filesystem::path board;  ///< the board's folder, canonical
    bool own_tmp = false;  ///< the board lives in temp: each run gets `tmp/` in its run folder
    /// Files in the writable tool state that name programs the tool runs for whoever starts
    /// it next (hooks in `~/.claude/settings.json`, `notify` in `~/.codex/config.toml`): what
    /// a run changes in them is put back after it (settings_guard.hpp), and so are the
    /// programs they name where `rules.writable` lets an agent write. As the tools name
    /// them: a link is guarded as the link it is.
    std::vector<std::filesystem::path> guarded;
    /// Claude Code's state (`~/.claude.json`, `$CLAUDE_CONFIG_DIR/.claude.json`, and the
    /// `.config.json` in its folder that it reads instead when there is one), which it
    /// rewrites all the time: only its MCP servers, environment and project approvals are put
    /// back (state_members.hpp), and a person's link is followed.
    std::vector<std::filesystem::path> guarded_members;
};

SharedConfinement shared_confinement(const std::filesystem::path& board_root);

/// Where a run happens, for its confinement.
struct ConfinementPlaces {
    std::filesystem::path run_folder;          ///< `runs/NNNN-<phase>/`: the agent's own
    std::filesystem::path cwd;                 ///< where it runs
    bool writes_cwd = false;                   ///< cwd is its worktree
    std::filesystem::path repository_git_dir;  ///< the board's repository's `.git`, if any
    std::filesystem::path worktree_admin;      ///< the worktree's git folder (worktree_admin_dir)
};

/// What one confined agent may write beyond the shared places (KeptWritingPlaces holds those):
/// its run folder, and when it
/// implements in a worktree that worktree and what its commits write of the repository's git
/// folder (objects, refs, reflogs, the worktree's own folder; never config, info/ or hooks/).
/// With `own_tmp`, makes the run's temp folder and points TMPDIR in `spec` at it.
/// The git folder of `worktree`: the `<git_dir>/worktrees/<name>` whose `gitdir` file names
/// the worktree's `.git`. Found from the repository's side, not from the worktree's `.git`
/// file, which is the agent's to rewrite (it could name another ticket's folder). None when
/// no folder names it.
std::optional<std::filesystem::path> worktree_admin_dir(const std::filesystem::path& worktree,
                                                        const std::filesystem::path& git_dir);

/// Puts back the links between a worktree and its repository as git made them: the
/// worktree's `.git` file, the git folder's `commondir` and `gitdir`, and no
/// `config.worktree`. An agent that rewrote one could make a person's next git command in the
/// worktree read another repository's config (a `core.fsmonitor` there runs a program), or
/// have another ticket's git folder granted at its next run. Returns one line per link put
/// back; empty when all held.
std::vector<std::string> restore_worktree_links(const std::filesystem::path& worktree,
                                                const std::filesystem::path& admin);

Confinement confinement_for(const SharedConfinement& shared,
                            const ConfinementPlaces& places,
                            LaunchSpec& spec);

/// After a run: the agent's draft in `work` becomes the ticket's artifact in `dir` (when it
/// changed; only a regular file with no other name is taken, never a link followed), and the
/// notes it left in `work/notes.jsonl` are the agent's.
void take_agent_work(RunRecord& record,
                     const std::filesystem::path& dir,
                     const std::filesystem::path& work,
                     const std::string& artifact_name);

/// `board note` inside a run leaves the agent's notes in its run folder: one JSON object per
/// line, `{"text": ...}`. Bad lines are warnings (the first 20); at most 100 notes.
void read_agent_notes(RunRecord& record, const std::string& file_text);

/// The `.git` folder of the repository holding `board_root` (the nearest one up), if it is a
/// folder; empty otherwise (no repository, or a `.git` file this code does not follow).
std::filesystem::path git_dir_of(const std::filesystem::path& board_root);

/// `git worktree` `.board/worktrees/<ID>` on branch `board/<ID>`, created on first use (hooks
/// and fsmonitor off), reused after. The path, or why not (git's output goes to `log_file`).
boost::asio::awaitable<std::variant<std::filesystem::path, std::string>> ensure_worktree(
    boost::asio::any_io_executor executor,
    const std::filesystem::path& board_root,
    const std::string& id,
    const std::filesystem::path& log_file);

/// A process started as an agent (or by one): what its environment says it runs for.
struct AgentProcessFound {
    int pid = 0;
    std::string ticket_dir;  ///< BOARD_TICKET_DIR
    std::string run;         ///< BOARD_RUN
    /// Taken before its environment was read (none on a kernel without pidfds): what is sent
    /// through it reaches this process, never one given its number since.
    UniqueFd pidfd;

    /// Whether it still runs (or is a zombie): then what was read of it by its number was
    /// its own.
    bool alive() const;
    /// Sends it `signal`; false when it has ended (or is not ours to signal).
    bool signal(int signal) const;
};

/// Every process with BOARD_TICKET_DIR and BOARD_RUN in its environment. Every agent is
/// started with both, and whatever it starts inherits them, so /proc finds the agents a dead
/// daemon left running with no pid file written per run.
std::vector<AgentProcessFound> processes_with_a_board_run();

}  // namespace board::orchestrator
