#include "orchestrator/answer_cache.hpp"

namespace board::orchestrator {

const app::QueryAnswer* AnswerCache::find(const std::string& key, UnixMillis now) {
    // Statted before the answer is made: a board.yaml changed while it is made is another
    // stamp at the next question, never a newer file taken for the one noted.
    settled_before_ns_ = file_times_from_now_ns();
    const auto yaml = stamp_of(board_yaml_);
    if (yaml != read_yaml_) {
        answers_.clear();
        read_yaml_ = yaml;
        return nullptr;
    }
    const auto it = answers_.find(key);
    if (it == answers_.end()) return nullptr;
    if (it->second.changes_at && now >= *it->second.changes_at) {
        answers_.erase(it);
        return nullptr;
    }
    return &it->second;
}

void AnswerCache::keep(std::string key, app::QueryAnswer answer) {
    // A board.yaml changed within the file clock's tick before it was statted could change
    // again with the same stamp (an edit in place of the same size): an answer made from it
    // is not kept.
    if (read_yaml_ && read_yaml_->ctime_ns >= settled_before_ns_) return;
    // A bound, not a policy: the questions a person's tools ask are few.
    if (answers_.size() >= 64) answers_.clear();
    answers_.insert_or_assign(std::move(key), std::move(answer));
}

}  // namespace board::orchestrator
