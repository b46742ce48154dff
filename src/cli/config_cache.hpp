#pragma once
// board.yaml for the one-shot `board` commands, kept parsed between runs.
//
// Why: yaml-cpp takes about 3 million instructions to read the fully commented board.yaml
// that `board init` writes, 85% of a `board create`. The parse is kept in
// `tickets/.config-cache` beside the exact board.yaml text it came from, and used only while
// board.yaml is byte for byte that text: an edit, however small and however quick, is read
// afresh. The cache also names the boot it was written in, so a cache committed to git or
// copied from another machine is never believed (it could otherwise say anything about a
// board.yaml it quotes). Only the CLI uses it; board-daemon parses board.yaml itself.

#include <board/board_config.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace board::cli {

/// What load_board_config(board / "board.yaml") returns, from the cache when it holds for
/// the file's current text; otherwise parsed, and the cache rewritten (temp file + rename,
/// best effort: a board whose tickets/ cannot be written to is only slower).
ConfigResult load_board_config_cached(const std::filesystem::path& board);

/// The cache's file: `tickets/.config-cache`.
std::filesystem::path config_cache_path(const std::filesystem::path& board);

/// BoardConfig <-> the cache's JSON. Every field is carried; reading refuses anything it does
/// not fully understand (nullopt), which sends the caller back to board.yaml.
std::string config_to_json(const BoardConfig& config);
std::optional<BoardConfig> config_from_json(std::string_view json);

}  // namespace board::cli
