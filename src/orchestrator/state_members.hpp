#pragma once
// The members of a tool's JSON state that name programs the tool runs, or approve them, when
// the rest of the file is the tool's own bookkeeping, rewritten all the time: `~/.claude.json`
// holds the user's MCP servers and each project's, and the approvals that start a project's
// `.mcp.json` servers unasked, beside the history, counters and account of every session.
// A confined agent may write that file (Claude Code must), so these members alone are taken
// before its run and put back after it (settings_guard.hpp): a server an agent adds there
// would run, unconfined, in the next session a person starts.
//
// Text in, text out: the file is never parsed into a document and written back whole, so
// what is not guarded stays byte for byte as the tool wrote it (its history may hold lone
// UTF-16 surrogates, which JSON.parse reads and strict UTF-8 parsers refuse).

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace board::orchestrator {

/// A member's name and the value a tool writes for "none" (`{}`, `[]`, `false`), which counts
/// the same as the member being absent.
struct GuardedMember {
    std::string_view name;
    std::string_view none;
};

/// Which members are guarded: some at the top level, and some in each object under the
/// top-level member `per_key_in` (keyed by a project's path).
struct GuardedMembers {
    std::vector<GuardedMember> top;
    std::string_view per_key_in;
    std::vector<GuardedMember> per_key;
};

/// `~/.claude.json` (and `$CLAUDE_CONFIG_DIR/.claude.json`): `mcpServers` and `env` (variables
/// Claude Code sets for itself at start, `LD_PRELOAD` as well as any) at the top; under
/// `projects`, each project's `mcpServers`, `enabledMcpjsonServers`,
/// `enableAllProjectMcpServers` and `hasTrustDialogAccepted` (Claude Code takes a folder as
/// trusted when any folder above it is).
const GuardedMembers& claude_state_members();

/// Where a guarded member is: the key under `per_key_in` (decoded; none for a top-level
/// member) and its name.
using MemberPlace = std::pair<std::optional<std::string>, std::string>;

/// The guarded members that hold something other than their "none", each value without the
/// white space between its tokens. Keys are compared decoded (`"mcp\u0053ervers"` is
/// `mcpServers`, as JSON.parse reads it) and, as there, the last of two equal keys counts; a
/// leading byte order mark is skipped, as Claude Code skips it.
using MemberValues = std::map<MemberPlace, std::string>;

/// The guarded members of `text`; nullopt when `text` is not one JSON object, or holds more
/// members at the levels read (the top, `per_key_in`, each key's object) than any real state
/// (100,000), which is not read at a cost an agent could choose.
std::optional<MemberValues> read_members(std::string_view text, const GuardedMembers& guarded);

/// `values` as a JSON object of their own (the top-level members, and `per_key_in` holding an
/// object per key): what is kept of the file, read back by read_members.
std::string members_document(const MemberValues& values, const GuardedMembers& guarded);

/// `text` with every guarded member as in `wanted`: each occurrence of a member that differs
/// (duplicates too, whichever one the tool keeps) is given the wanted value (or its "none"
/// when `wanted` has none), one that is missing is added when `wanted` has it. Everything else
/// is left as it is. nullopt when read_members would give nullopt.
std::optional<std::string> put_members(std::string_view text,
                                       const MemberValues& wanted,
                                       const GuardedMembers& guarded);

}  // namespace board::orchestrator
