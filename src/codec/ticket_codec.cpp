// Tickets <-> ticket.json and `show --json`. The fields are listed in schema.hpp; this file
// adds the artifacts map (keyed by kind) and the legacy `manual` input.

#include "json_io.hpp"
#include "schema.hpp"

#include <board/codec.hpp>

#include <cstddef>
#include <string>
#include <utility>

namespace board {
namespace codec_detail {

void Writer::put(const Artifacts& artifacts) {
    out_.begin_object();
    for (const ArtifactKind kind : all_artifact_kinds)
        if (const auto& artifact = artifacts[static_cast<std::size_t>(kind)])
            identity(to_string(kind), *artifact);
    out_.end_object();
}

void Reader::get(const json::value& value, const Path& at, Artifacts& out) const {
    const auto* object = value.if_object();
    if (object == nullptr) fail_type(at, "an object", value);
    out = {};
    for (const auto& member : *object) {
        const std::string_view key{member.key().data(), member.key().size()};
        const Path item = at.member(key);
        const auto kind = parse<ArtifactKind>(key);
        if (!kind) fail_at(item, "unknown artifact kind " + quote(key));
        get(member.value(), item, out[static_cast<std::size_t>(*kind)].emplace());
    }
}

}  // namespace codec_detail

namespace {

using codec_detail::guarded;
using codec_detail::Path;
using codec_detail::Reader;

Ticket read_ticket(const boost::json::value& document) {
    const Path root;
    const Reader io{document, root, /*lenient=*/true};
    Ticket ticket;
    describe(io, ticket);
    // Deprecated input (state-machine.md §2): `manual: true` without `awaiting` is `work`.
    bool manual = false;
    io.optional("manual", manual);
    if (manual && !ticket.awaiting) ticket.awaiting = Awaiting::work;
    return ticket;
}

}  // namespace

std::string encode_ticket(const Ticket& ticket) {
    std::string out;
    out.reserve(1024);
    {
        codec_detail::Writer io{out};  // `out` is complete when the writer is gone
        io.put(ticket);
    }
    return out;
}

boost::json::object ticket_to_json(const Ticket& ticket) {
    codec_detail::JsonParser parser;
    return std::move(parser.parse(encode_ticket(ticket)).as_object());
}

DecodeResult<Ticket> decode_ticket(std::string_view json) {
    return guarded<Ticket>([&] {
        codec_detail::JsonParser parser;
        return read_ticket(parser.parse(json));
    });
}

DecodeResult<Ticket> ticket_from_json(const boost::json::value& document) {
    return guarded<Ticket>([&] { return read_ticket(document); });
}

}  // namespace board
