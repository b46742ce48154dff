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
#include <variant>
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

/// The paths named in `settings`, and the folders on the way to each: what a kept baseline
/// may hold (a daemon's recovery believes no other path).
std::unordered_set<std::string> named_or_on_the_way(const std::vector<GuardedFile>& settings,
                                                    const NamedProgramPlaces& places);

/// `now`, read at `was.path` or through its held folder, as take_named_programs() takes a
/// path, to compare with `was`.
void as_taken(GuardedFile& now, const GuardedFile& was);

/// The folder `place` is in (resolved) lies where an agent may write.
bool lies_where_agents_write(const std::filesystem::path& folder, const NamedProgramPlaces& places);

/// Records in `file.leads_to` the folder `file.path` is in, resolved (nothing when there is
/// none): a settings file is then put back only into that folder, like a named program.
void take_folder_of(GuardedFile& file);

/// The folder a named program or settings file is put back into, opened and held: the put-back's
/// reads and writes go `through` it (`/proc/self/fd/N`, the folder the descriptor holds whatever
/// its path names by then), so a link an agent of another run puts on the way after the check
/// cannot lead them elsewhere.
struct HeldFolder {
    UniqueFd fd;
    std::filesystem::path through;
};

/// Makes the folder the named program or settings file `was` was in (`leads_to`) be there
/// again, and holds it, before it is put back: on its way, a link an agent made where it may write
/// is replaced by a folder, and a folder that is gone is made again, owner only (`kept_link`: the
/// links the baseline keeps, put back already). Why it could not, instead: a put-back never writes
/// into a folder other than the one it took the program from.
std::variant<HeldFolder, std::string> put_folder_back(
    const GuardedFile& was,
    const NamedProgramPlaces& places,
    const std::function<bool(const std::filesystem::path&)>& kept_link);

}  // namespace board::orchestrator
