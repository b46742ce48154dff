#pragma once
// The files a tool's settings name for it to run: a hook's script
// (`"command": "~/.claude/hooks/check.sh"`), a `notify` program, an MCP server's script. An
// agent that may write where such a file lies could change what runs, unconfined, when a
// person next starts the tool; the settings guard keeps those files too (settings_guard.hpp).
//
// Found by their text, whatever the format (JSON, TOML, a members document): every word that
// starts as an absolute path (`/`, `~/`, `$HOME/`, `${HOME}/`), up to white space, a quote, a
// backslash (a JSON escape), `=` or one of `,;|&()[]<>` and the backtick. A word in a
// format's own syntax that looks like a path is found too, which costs a lookup; a path with
// white space in it is not found.

#include <filesystem>
#include <string_view>
#include <vector>

namespace board::orchestrator {

/// The absolute paths `text` names, `~` and `$HOME` read as `home` (none of those when `home`
/// is empty), lexically normal, each once, in the order first named. The root itself is not
/// a path named.
std::vector<std::filesystem::path> paths_named_in(std::string_view text,
                                                  const std::filesystem::path& home);

}  // namespace board::orchestrator
