#pragma once
// The files a tool's settings name for it to run: a hook's script
// (`"command": "~/.claude/hooks/check.sh"`), a `notify` program, an MCP server's script. An
// agent that may write where such a file lies could change what runs, unconfined, when a
// person next starts the tool; the settings guard keeps those files too (settings_guard.hpp).
//
// Found by their text, whatever the format (JSON, TOML, a members document): every word that
// starts as an absolute path (`/`, `~/`, `$HOME/`, `${HOME}/`, or a tool's own folder by
// its variable: `$CLAUDE_CONFIG_DIR/`), up to white space, a quote, a
// backslash (a JSON escape), `=` or one of `,;|&()[]<>` and the backtick. A word in a
// format's own syntax that looks like a path is found too, which costs a lookup; a path with
// white space in it is not found.

#include "orchestrator/settings_guard.hpp"
#include "support/unique_fd.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace board::orchestrator {

/// The absolute paths `text` names, `~` and `$HOME` read as `home` (none of those when `home`
/// is empty) and `$NAME` or `${NAME}` as each of `variables`, lexically normal, each once, in
/// the order first named. The root itself is not a path named.
std::vector<std::filesystem::path> paths_named_in(std::string_view text,
                                                  const std::filesystem::path& home,
                                                  const NamingVariables& variables = {});

/// The programs `settings` name, taken as they are when the runs begin.
struct NamedPrograms {
    /// Each program that lies where an agent may write and that a tool would run
    /// (executable, `#!`, or a script by its name: `node ~/.claude/server.js`), as a file's
    /// text, or as the link it is (the file it leads to is not kept: a person's dotfiles);
    /// before it, each link on its way that lies where an agent may write, as the link it is.
    /// When a program that is a link leads to a file where an agent may write, that file
    /// too. `leads_to` holds the folder each was in, resolved: a put-back writes only there.
    std::vector<GuardedFile> kept;
    /// What could not be kept, one line each: said at each put-back.
    std::vector<std::string> unchecked;
};

/// At most 64 programs, of at most 1,024 paths named, are kept; a line says where it stopped.
/// `guarded_already`: paths guarded as settings.
NamedPrograms take_named_programs(
    const std::vector<GuardedFile>& settings,
    const NamedProgramPlaces& places,
    const std::function<bool(const std::filesystem::path&)>& guarded_already);

/// The paths named in `settings`, the settings' own paths, and the folders on the way to
/// each: what a kept baseline may hold (a daemon's recovery believes no other path).
std::unordered_set<std::string> named_or_on_the_way(const std::vector<GuardedFile>& settings,
                                                    const NamedProgramPlaces& places);

/// `now`, read at `was.path` or through its held folder, as `was` was taken, to compare
/// with it: a link is compared as the link it is (what it leads to is kept on its own when
/// an agent may write it).
void as_taken(GuardedFile& now, const GuardedFile& was);

/// The path the link entry `link` leads to, as taken: its text read from the folder it was in
/// (`leads_to`, resolved), lexically normal.
std::filesystem::path link_leads_to(const GuardedFile& link);

/// The folder `place` is in (resolved) lies where an agent may write.
bool lies_where_agents_write(const std::filesystem::path& folder, const NamedProgramPlaces& places);

/// What a settings file's put-back needs with it, in the order to put back: the links on its
/// way that lie where an agent may write (a person's `CLAUDE_CONFIG_DIR` in temp leading to
/// their dotfiles), as the links they are; `file` itself, with the folder it is in (or would
/// be in), resolved, as `leads_to`; and when `file` is a link, the file it leads to if an
/// agent may write that too (and each link between, as the links they are). A put-back then
/// never writes through a link: it puts the link back, and the file it leads to as a file of
/// its own.
std::vector<GuardedFile> with_its_way(GuardedFile file, const NamedProgramPlaces& places);

/// The folder a named program or settings file is put back into, opened and held: the
/// put-back's reads and writes go `through` it (`/proc/self/fd/N`, the folder the descriptor
/// holds whatever its path names by then), so a link an agent of another run puts on the way
/// after the check cannot lead them elsewhere.
struct HeldFolder {
    UniqueFd fd;
    std::filesystem::path through;
};

/// How the folder of a guarded path was found before its put-back.
struct FolderCheck {
    enum class Outcome {
        held,     ///< `folder` is where it was, held: put back through it
        gone,     ///< an absent path's folder is gone: it is still absent (`line`: what was done)
        changed,  ///< changed where no agent may write: a person's doing, said in `line`
        refused,  ///< cannot be put back now, said in `line`: tried again after the next run
    };
    Outcome outcome = Outcome::refused;
    HeldFolder folder;
    std::string line;
};

/// Walks to the folder `was` was in (`leads_to`, resolved when taken, so a folder at every
/// step), a component at a time from `/`, each through the descriptor of the one before, so
/// nothing an agent swaps meanwhile can lead it elsewhere; and holds it. On the way, a link
/// an agent made where it may write gives way to a folder, and a folder that is gone is made
/// again, owner only (neither for a path that was absent: it is absent still, and a line says
/// so when a link was removed; not one the baseline keeps, `kept_link`, a person's link to a
/// folder not made yet). A change where no agent may write is a person's: `changed`. The links
/// a person has on the path as the settings name it are kept entries of their own. An agent
/// that took the owner's rights away from a folder on the way where it may write has them
/// given back.
FolderCheck put_folder_back(const GuardedFile& was,
                            const NamedProgramPlaces& places,
                            const std::function<bool(const std::filesystem::path&)>& kept_link);

}  // namespace board::orchestrator
