#pragma once
// The daemon's answers to board queries, kept until they could differ: a big board's JSON is
// most of an answer's cost, and the same question is often asked again before anything
// changes. An answer holds until a ticket changes (clear()), board.yaml changes (the policy
// its standings are told by), or the time comes when a standing it shows changes by itself
// (a backoff ends).

#include "support/files.hpp"

#include <board/app.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>

namespace board::orchestrator {

class AnswerCache {
public:
    explicit AnswerCache(std::filesystem::path board_yaml)
        : board_yaml_(std::move(board_yaml)) {}

    /// The answer kept for `key` if it still holds at wall time `now`. Call it before making
    /// an answer to keep(): it notes the board.yaml that answer will read.
    const app::QueryAnswer* find(const std::string& key, UnixMillis now);
    void keep(std::string key, app::QueryAnswer answer);

    void clear() { answers_.clear(); }

private:
    std::filesystem::path board_yaml_;
    std::optional<FileStamp> read_yaml_;  ///< board.yaml as the kept answers read it
    std::int64_t settled_before_ns_ = 0;  ///< file_times_from_now_ns() at its last stat
    std::unordered_map<std::string, app::QueryAnswer> answers_;
};

}  // namespace board::orchestrator
