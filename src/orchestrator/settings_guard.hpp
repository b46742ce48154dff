#pragma once
// The settings of the agents' tools that name programs the tool runs, unconfined, for whoever
// starts it next: a hook in `~/.claude/settings.json`, `notify` in `~/.codex/config.toml`, an
// MCP server or a project's approval of one in `~/.claude.json` (those members alone), and
// the scripts those name where an agent may write (named_programs.hpp). A confined agent may write
// its tool's state, so these are taken as they are when the first of the confined runs going at
// once begins, put back to that after each one ends (an interrupted one too), and, when a daemon
// died during a run, by the next one at its start: while runs go on they are kept on disk in the
// board's private folder.

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace board::orchestrator {

/// One guarded path as it was: absent, a regular file's text, or a symbolic link (guarded as
/// the link it is, and the text it leads to).
struct GuardedFile {
    enum class Kind { absent, file, link };
    std::filesystem::path path;
    Kind kind = Kind::absent;
    std::string content;                   ///< the file's text, or the link's target as written
    std::optional<std::string> link_text;  ///< a link: the text of the file it leads to
    /// A file's permission bits (a link: those of the file it leads to), kept when it is put
    /// back: settings often hold keys, and a put-back must not open them to others.
    unsigned mode = 0644;
    /// A Claude state file that is a link: where it led, resolved, when taken (empty when it
    /// could not be resolved); written through only while it still leads there. A settings
    /// file or a named program: the folder it was in, resolved; put back only into it.
    std::optional<std::string> leads_to;
    friend bool operator==(const GuardedFile&, const GuardedFile&) = default;
};

/// Folders a settings text may name a path from by a variable (`$CLAUDE_CONFIG_DIR/hooks/x.sh`),
/// by the variable's name, as the daemon's environment sets them.
using NamingVariables = std::vector<std::pair<std::string, std::filesystem::path>>;

/// Where the files guarded settings name can be changed by an agent: the places every confined
/// run may write (canonical), the home `~` and `$HOME` stand for, and the tools' own folders
/// their variables stand for; and the files no agent may read (canonical), whose text is never
/// kept.
struct NamedProgramPlaces {
    std::vector<std::filesystem::path> writable;
    std::filesystem::path home;
    NamingVariables variables;
    std::vector<std::filesystem::path> hidden;
};

class SettingsGuard {
public:
    /// `files`: the paths as the tools name them. `kept`: where the settings as they were are
    /// kept while runs go on (a file in the board's private folder); empty: in memory only.
    /// `claude_states`: Claude Code's state files, of which only the members that name or
    /// approve programs are guarded (claude_state_members()), through a link if it is one;
    /// what is kept of them is those members alone. `named`: where the programs those
    /// settings and members name are guarded too (take_named_programs(): a hook's script, an
    /// MCP server's), as they were when the runs began.
    SettingsGuard(std::vector<std::filesystem::path> files,
                  std::filesystem::path kept,
                  std::vector<std::filesystem::path> claude_states = {},
                  NamedProgramPlaces named = {});

    /// Held by a confined run from before its launch to its end: the first one takes the
    /// settings as they are; they are forgotten at settle().
    class Run {
    public:
        explicit Run(std::shared_ptr<SettingsGuard> guard);
        /// Without put_back() first (an error cut the run short), the settings as they were
        /// are kept, memory and disk, for the next put-back to use.
        ~Run();
        Run(const Run&) = delete;
        Run& operator=(const Run&) = delete;

        /// Puts back every guarded path that is not as it was when the runs going now began,
        /// keeping a changed file's text in `changed_dir` as `changed-<folder>-<name>`
        /// (`changed-.claude-settings.json`). One line per
        /// path put back (or that could not be: then the settings as they were are kept
        /// until a later put-back succeeds).
        std::vector<std::string> put_back(const std::filesystem::path& changed_dir);

    private:
        std::shared_ptr<SettingsGuard> guard_;
        bool put_back_ = false;
    };

    /// At start, before any run and after the board's lock is taken: settings a daemon that
    /// died during a run had kept are put back, and the kept file removed (one an older daemon
    /// kept directly in `.board/` too). One line per path put back.
    std::vector<std::string> recover(const std::filesystem::path& changed_dir);

    /// Called when no run is going (and none is about to start): the settings as they were
    /// are forgotten, memory and disk, so that a daemon that dies while idle leaves nothing
    /// to put back over a person's later edits. Until then a run that begins with the
    /// settings unchanged keeps the baseline as it is; one that finds them changed takes
    /// them afresh. Nothing while a put-back is owed.
    void settle();

private:
    void begin();
    void end(bool put_back);
    std::vector<std::string> put_back_locked(const std::vector<GuardedFile>& before,
                                             const std::filesystem::path& changed_dir);
    bool is_claude_state(const std::filesystem::path& path) const;
    bool is_settings_file(const std::filesystem::path& path) const;
    /// The text of the file `path` leads to, unless it is one of `named_.hidden`.
    std::optional<std::string> text_unless_hidden(const std::filesystem::path& path) const;
    /// Why `was` is guarded, for a put-back's note: "<role> the tool runs, ...".
    std::string_view role_of(const GuardedFile& was, const std::vector<GuardedFile>& before) const;

    std::vector<std::filesystem::path> files_;
    std::vector<std::filesystem::path> claude_states_;
    std::vector<std::filesystem::path> unread_;  ///< Claude states unreadable at the baseline
    NamedProgramPlaces named_;
    /// Named programs that could not be kept at the baseline, a line each.
    std::vector<std::string> unchecked_;
    std::filesystem::path kept_;
    std::mutex mutex_;
    int runs_ = 0;                     ///< confined runs holding a Run
    std::vector<GuardedFile> before_;  ///< as they were when the first of them began
    bool held_ = false;     ///< `before_` is the baseline of the runs going or just ended
    bool on_disk_ = false;  ///< and it is in `kept_` (or nothing is kept on disk)
    bool owed_ = false;     ///< a put-back failed or never came: `before_` stays until one works
};

/// Where the settings as they were are kept while runs go on: `.board/guard/`, made if need
/// be. A folder of its own because the agents' reading rules list `.board`'s entries one by
/// one (it holds the page's token) and are made again whenever that listing changes; a file
/// written and removed there at every run would remake them at every run. Empty when no such
/// folder can be had (the settings are then kept in memory only).
std::filesystem::path settings_kept_file(const std::filesystem::path& board_root);

/// How `path` is now (a file over `max_bytes`, or one that cannot be read: nullopt).
std::optional<GuardedFile> guarded_state(const std::filesystem::path& path);

/// How the guarded members of the Claude state file at `path` are now: absent, or a file whose
/// `content` is those members alone (members_document), or is empty when they cannot be read
/// (not JSON, too big, not a file).
GuardedFile claude_state(const std::filesystem::path& path);

}  // namespace board::orchestrator
