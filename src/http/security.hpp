#pragma once
// The checks between a request and the disk: the token, the Host header, the request target,
// and the one file read a client may name (an artifact). Pure functions except the token
// file and the artifact read; each says what it refuses and why.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace board::http {

/// The token of `<board>/.board/http-token`, created (mode 0600, 64 hex digits from
/// /dev/urandom) if absent. `generated` says it was made now. nullopt with `error` set when it
/// cannot be read or made, or when the file is readable by others (it would not be secret).
std::optional<std::string> load_or_create_token(const std::filesystem::path& board,
                                                bool& generated,
                                                std::string& error);

/// Equal without an early exit, so response time says nothing about the token.
bool same_token(std::string_view a, std::string_view b);

/// The token a request carries: `Authorization: Bearer T`. Never a cookie: a browser sends a
/// host's cookies to every port of it (RFC 6265 §8.5), so any program listening on another
/// loopback port, an agent's test server say, would receive the token from the page.
std::string presented_token(std::string_view authorization);

/// A request target split: the path segments, percent-decoded, and the query parameters.
/// nullopt for a malformed target (bad escape, a NUL, not starting with `/`).
struct Target {
    std::vector<std::string> segments;  ///< `/api/tickets/P-1` → {"api","tickets","P-1"}
    std::map<std::string, std::string> query;

    bool has(const std::string& key) const { return query.count(key) != 0; }

    std::string get(const std::string& key) const {
        auto it = query.find(key);
        return it == query.end() ? std::string{} : it->second;
    }
};

std::optional<Target> parse_target(std::string_view target);

/// For a loopback bind: the Host header names a loopback host (defeats DNS rebinding, where a
/// page on evil.example resolves its own name to 127.0.0.1 to reach this server).
bool host_is_loopback(std::string_view host_header);

/// A file name an artifact may have: letters, digits, `._-`, not starting with a dot, at most
/// 128 bytes. So no `/`, no `..`, no hidden files.
bool is_valid_artifact_name(std::string_view name);

/// Reads `ticket_dir/name` without following a symlink at either step (the ticket folder or
/// the file) and only if it is a regular file with no other hard link, of at most
/// `max_bytes`. The error is one
/// sentence; `missing` distinguishes "no such file" (404) from the rest.
std::optional<std::string> read_confined(const std::filesystem::path& ticket_dir,
                                         std::string_view name,
                                         std::uint64_t max_bytes,
                                         bool& missing,
                                         std::string& error);

}  // namespace board::http
