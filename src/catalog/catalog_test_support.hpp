#pragma once
// Shared by the catalog tests: tickets made in memory, and a run in some phase.

#include <board/catalog.hpp>

#include <string>
#include <utility>

namespace board::catalog_test {

inline Ticket make(std::string id, int priority = 2, UnixMillis created_at = 0) {
    Ticket t;
    t.id = std::move(id);
    t.title = "ticket " + t.id;
    t.priority = priority;
    t.created_at = created_at;
    t.status = Status::backlog;
    return t;
}

inline Ticket make_epic(std::string id) {
    Ticket t = make(std::move(id));
    t.type = TicketType::epic;
    return t;
}

inline Ticket child_of(std::string parent, std::string id, Status status = Status::backlog) {
    Ticket t = make(std::move(id));
    t.parent = std::move(parent);
    t.status = status;
    return t;
}

inline Run running(Status phase) {
    Run run;
    run.id = "r1";
    run.phase = phase;
    return run;
}

}  // namespace board::catalog_test
