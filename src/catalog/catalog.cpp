// The pure half of the catalog: §7 queries over tickets in memory. Every decision about a
// single ticket is next_action()'s; every ordering is comes_before()'s.

#include "catalog/id_order.hpp"

#include <board/catalog.hpp>

#include <algorithm>
#include <unordered_set>

namespace board {

using catalog_detail::position_in;

CatalogEntry summarize(const Ticket& ticket) {
    CatalogEntry entry;
    entry.ticket = ticket;  // the summary part only
    if (entry.ticket.run) entry.ticket.run->policy = RunPolicy{};
    entry.questions_total = static_cast<int>(ticket.questions.size());
    entry.questions_pending = static_cast<int>(
        std::count_if(ticket.questions.begin(), ticket.questions.end(), [](const Question& q) {
            return q.status == QuestionStatus::pending;
        }));
    entry.notes = static_cast<int>(ticket.notes.size());
    return entry;
}

Catalog::Catalog(std::vector<CatalogEntry> entries)
    : entries_(std::move(entries)) {
    // Loads come in id order already (the index is written so), but for the tickets folded
    // on this load, appended at the end: the order is checked in the pass that counts, and
    // only when it does not hold is the tail out of order sorted and merged in (sorting
    // 10,000 big entries would cost more than the load). In id order, find() is a binary
    // search.
    if (count_all(true)) return;
    const auto by_id = [](const CatalogEntry& a, const CatalogEntry& b) {
        return id_less(a.ticket.id, b.ticket.id);
    };
    const auto tail = std::is_sorted_until(entries_.begin(), entries_.end(), by_id);
    std::sort(tail, entries_.end(), by_id);
    std::inplace_merge(entries_.begin(), tail, entries_.end(), by_id);
    count_all(false);
}

Catalog::Catalog(Catalog&& other) noexcept
    : entries_(std::move(other.entries_))
    , columns_(other.columns_)
    , epics_(std::move(other.epics_)) {
    other.clear();
}

Catalog& Catalog::operator=(Catalog&& other) noexcept {
    if (this == &other) return *this;
    entries_ = std::move(other.entries_);
    columns_ = other.columns_;
    epics_ = std::move(other.epics_);
    other.clear();
    return *this;
}

void Catalog::clear() noexcept {
    entries_.clear();
    columns_ = BoardFacts{};
    epics_.clear();
}

bool Catalog::replace(CatalogEntry entry) {
    const auto at = position_in(entries_, entry.ticket.id);
    if (at == entries_.end() || at->ticket.id != entry.ticket.id) return false;
    // What can throw (the copy, the new parent's facts made) comes before any count moves;
    // facts with no children yet are harmless and settled below.
    const std::string parent_before = at->ticket.parent;
    if (!entry.ticket.parent.empty()) epics_.try_emplace(entry.ticket.parent);
    count(*at, -1);
    *at = std::move(entry);
    count(*at, 1);
    // The epics whose facts may have moved: the parent it had, the one it has, and the
    // ticket itself when it is a parent (closing an epic completes it).
    settle(parent_before);
    settle(at->ticket.parent);
    settle(at->ticket.id);
    return true;
}

bool Catalog::count_all(bool check_order) {
    columns_ = BoardFacts{};
    epics_.clear();
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        if (check_order && i > 0 && id_less(entries_[i].ticket.id, entries_[i - 1].ticket.id)) {
            columns_ = BoardFacts{};
            epics_.clear();
            return false;
        }
        count(entries_[i], 1);
    }
    for (auto& [epic_id, facts] : epics_) settle(epic_id, facts);
    return true;
}

void Catalog::count(const CatalogEntry& entry, int sign) {
    const TicketSummary& t = entry.ticket;
    columns_.in_status[static_cast<std::size_t>(t.status)] += sign;
    if (t.run) columns_.runs_in_status[static_cast<std::size_t>(t.run->phase)] += sign;
    if (t.parent.empty()) return;
    EpicFacts& facts = epics_.try_emplace(t.parent).first->second;
    facts.progress.children += sign;
    if (t.status == Status::done) facts.progress.done += sign;
    if (t.run) facts.children_in_flight += sign;
}

void Catalog::settle(std::string_view epic_id) {
    const auto it = epics_.find(epic_id);
    if (it == epics_.end()) return;
    if (it->second.progress.children == 0) {
        // As a catalog built anew: a parent no ticket names has no facts.
        epics_.erase(it);
        return;
    }
    settle(it->first, it->second);
}

void Catalog::settle(std::string_view epic_id, EpicFacts& facts) const {
    const CatalogEntry* epic = find(epic_id);
    facts.on_board = epic != nullptr;
    const bool closed = epic && epic->ticket.status == Status::done;
    EpicProgress& progress = facts.progress;
    progress.complete = closed || (progress.children > 0 && progress.done == progress.children);
}

const CatalogEntry* Catalog::find(std::string_view id) const {
    const auto at = position_in(entries_, id);
    return at == entries_.end() || at->ticket.id != id ? nullptr : &*at;
}

EpicProgress Catalog::epic_progress(std::string_view epic_id) const {
    if (const auto it = epics_.find(epic_id); it != epics_.end()) return it->second.progress;
    EpicProgress none;
    const CatalogEntry* epic = find(epic_id);
    none.complete = epic && epic->ticket.status == Status::done;
    return none;
}

Status Catalog::shown_status(const TicketSummary& ticket) const {
    if (ticket.type == TicketType::epic && epic_progress(ticket.id).complete) return Status::done;
    return ticket.status;
}

EpicState Catalog::epic_state(const TicketSummary& ticket) const {
    if (ticket.parent.empty()) return EpicState::none;
    const auto it = epics_.find(ticket.parent);
    if (it == epics_.end()) {
        // A ticket from outside the catalog, naming a parent no ticket here names.
        const CatalogEntry* epic = find(ticket.parent);
        return !epic || epic->ticket.status == Status::done ? EpicState::done : EpicState::open;
    }
    const EpicFacts& epic = it->second;
    if (!epic.on_board || epic.progress.complete) return EpicState::done;
    return epic.children_in_flight > 0 ? EpicState::in_flight : EpicState::open;
}

BoardFacts Catalog::facts_for(const TicketSummary& ticket) const {
    BoardFacts facts = columns_;
    facts.blockers_done = blockers_done(ticket);
    return facts;
}

bool Catalog::blockers_done(const TicketSummary& ticket) const {
    return std::all_of(
        ticket.blocked_by.begin(), ticket.blocked_by.end(), [&](const std::string& id) {
            const CatalogEntry* blocker = find(id);
            return blocker && shown_status(blocker->ticket) == Status::done;
        });
}

bool Catalog::matches(const CatalogEntry& entry, const NextFilter& filter) const {
    const TicketSummary& t = entry.ticket;
    if (!filter.epic.empty() && t.parent != filter.epic) return false;
    if (filter.standalone && !t.parent.empty()) return false;
    if (filter.orphan && epic_state(t) != EpicState::done) return false;
    return true;
}

std::vector<std::pair<QueueKey, const CatalogEntry*>> Catalog::keyed_by_queue(
    const std::vector<const CatalogEntry*>& picked) const {
    std::vector<std::pair<QueueKey, const CatalogEntry*>> keyed;
    keyed.reserve(picked.size());
    for (const auto* e : picked) keyed.emplace_back(queue_key(e->ticket, epic_state(e->ticket)), e);
    return keyed;
}

std::vector<const CatalogEntry*> Catalog::in_next_order(
    std::vector<const CatalogEntry*> picked) const {
    auto keyed = keyed_by_queue(picked);
    std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
        return comes_before(a.first, b.first);
    });
    for (std::size_t i = 0; i < keyed.size(); ++i) picked[i] = keyed[i].second;
    return picked;
}

std::vector<const CatalogEntry*> Catalog::list(const ListFilter& filter) const {
    const bool done_named =
        std::find(filter.statuses.begin(), filter.statuses.end(), Status::done) !=
        filter.statuses.end();
    std::vector<const CatalogEntry*> picked;
    for (const auto& e : entries_) {
        const TicketSummary& t = e.ticket;
        const Status status = shown_status(t);
        if (!filter.statuses.empty() &&
            std::find(filter.statuses.begin(), filter.statuses.end(), status) ==
                filter.statuses.end())
            continue;
        if (status == Status::done && !filter.all && !done_named) continue;
        if ((filter.awaiting_any || !filter.awaiting.empty()) && !t.awaiting) continue;
        if (!filter.awaiting.empty() &&
            std::find(filter.awaiting.begin(), filter.awaiting.end(), *t.awaiting) ==
                filter.awaiting.end())
            continue;
        if (!filter.parent.empty() && t.parent != filter.parent) continue;
        if (filter.standalone && !t.parent.empty()) continue;
        if (filter.orphan && epic_state(t) != EpicState::done) continue;
        const bool has_labels =
            std::all_of(filter.labels.begin(), filter.labels.end(), [&](const std::string& l) {
                return std::find(t.labels.begin(), t.labels.end(), l) != t.labels.end();
            });
        if (!has_labels) continue;
        picked.push_back(&e);
    }
    return in_next_order(std::move(picked));
}

std::vector<const CatalogEntry*> Catalog::pick_ready(const Policy& policy,
                                                     const NextFilter& filter) const {
    std::vector<const CatalogEntry*> picked;
    for (const auto& e : entries_) {
        const TicketSummary& t = e.ticket;
        // Cheap refusals first: next_action() would say the same, without the blocker lookups.
        if (t.status == Status::done || t.awaiting || t.run || t.type == TicketType::epic) continue;
        if (!matches(e, filter)) continue;
        BoardFacts facts = columns_;
        facts.blockers_done = blockers_done(t);
        if (std::holds_alternative<StartRun>(next_action(t, policy, facts))) picked.push_back(&e);
    }
    return picked;
}

std::vector<const CatalogEntry*> Catalog::ready(const Policy& policy,
                                                const NextFilter& filter) const {
    return in_next_order(pick_ready(policy, filter));
}

void Catalog::take_ready(const Policy& policy,
                         const NextFilter& filter,
                         const std::function<bool(const CatalogEntry&)>& take) const {
    auto keyed = keyed_by_queue(pick_ready(policy, filter));
    // A heap with the first in `next` order on top: the ids are unique, so the order is total
    // and the heap gives exactly ready()'s order.
    const auto later = [](const auto& a, const auto& b) { return comes_before(b.first, a.first); };
    std::make_heap(keyed.begin(), keyed.end(), later);
    for (auto end = keyed.end(); end != keyed.begin(); --end) {
        std::pop_heap(keyed.begin(), end, later);
        if (!take(*std::prev(end)->second)) return;
    }
}

const CatalogEntry* Catalog::next_for_agent(const Policy& policy, const NextFilter& filter) const {
    const CatalogEntry* first = nullptr;
    take_ready(policy, filter, [&first](const CatalogEntry& e) {
        first = &e;
        return false;
    });
    return first;
}

std::vector<const CatalogEntry*> Catalog::awaiting_human(std::span<const Awaiting> types,
                                                         const NextFilter& filter) const {
    std::vector<const CatalogEntry*> picked;
    for (const auto& e : entries_) {
        const TicketSummary& t = e.ticket;
        if (!t.awaiting) continue;
        if (!types.empty() && std::find(types.begin(), types.end(), *t.awaiting) == types.end())
            continue;
        if (!matches(e, filter)) continue;
        picked.push_back(&e);
    }
    return in_next_order(std::move(picked));
}

const CatalogEntry* Catalog::next_for_human(std::span<const Awaiting> types,
                                            const NextFilter& filter) const {
    const auto all = awaiting_human(types, filter);
    return all.empty() ? nullptr : all.front();
}

std::optional<std::string> Catalog::blocked_by_error(std::string_view ticket_id,
                                                     std::span<const std::string> blockers) const {
    for (const auto& id : blockers) {
        if (!is_valid_ticket_id(id))
            return "blocked_by: \"" + id + "\" is not a ticket id (expected PREFIX-N)";
        if (id == ticket_id) return "blocked_by: " + id + " cannot block itself";
        if (!find(id)) return "blocked_by: no ticket " + id + " on this board";
    }
    // A cycle through the new edges must come back to ticket_id: search from each blocker
    // along the existing blocked_by edges, remembering the way back to name the cycle.
    for (const auto& start : blockers) {
        std::unordered_map<std::string_view, std::string_view> came_from;
        std::vector<std::string_view> stack{start};
        came_from.emplace(start, ticket_id);
        while (!stack.empty()) {
            const std::string_view at = stack.back();
            stack.pop_back();
            const CatalogEntry* e = find(at);
            if (!e) continue;
            for (const auto& next : e->ticket.blocked_by) {
                if (next == ticket_id) {
                    std::vector<std::string_view> path{ticket_id};
                    for (std::string_view step = at; step != ticket_id; step = came_from[step])
                        path.insert(path.begin() + 1, step);
                    path.push_back(ticket_id);
                    std::string named;
                    for (std::size_t i = 0; i < path.size(); ++i) {
                        if (i > 0) named += " → ";
                        named += path[i];
                    }
                    return "blocked_by: " + named + " would be a cycle (each waits for the next)";
                }
                if (came_from.emplace(next, at).second) stack.push_back(next);
            }
        }
    }
    return std::nullopt;
}

std::optional<std::string> Catalog::epic_error(std::string_view id) const {
    const std::string named{id};
    if (!is_valid_ticket_id(id)) return "\"" + named + "\" is not a ticket id (expected PREFIX-N)";
    const CatalogEntry* epic = find(id);
    if (!epic) return "no ticket " + named + " on this board";
    if (epic->ticket.type != TicketType::epic)
        return named + " is a " + std::string{to_string(epic->ticket.type)} + ", not an epic";
    return std::nullopt;
}

std::optional<std::string> Catalog::parent_error(std::string_view ticket_id,
                                                 std::string_view parent) const {
    if (parent.empty()) return std::nullopt;
    const std::string named{parent};
    if (is_valid_ticket_id(parent) && parent == ticket_id)
        return "parent: " + named + " cannot be its own parent";
    if (auto why = epic_error(parent)) return "parent: " + *why;
    const CatalogEntry* epic = find(parent);
    // An epic inside its own descendant would never be done (each waits for the other).
    std::string chain = std::string{ticket_id} + " → " + named;
    const CatalogEntry* up = epic;
    for (std::size_t steps = 0; up && !up->ticket.parent.empty() && steps < entries_.size();
         ++steps) {
        chain += " → " + up->ticket.parent;
        if (up->ticket.parent == ticket_id)
            return "parent: " + chain + " would be a cycle (each inside the next)";
        up = find(up->ticket.parent);
    }
    return std::nullopt;
}

}  // namespace board
