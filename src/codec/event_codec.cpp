// Events <-> one line of events.jsonl. The payload fields are listed in schema.hpp; this file
// adds the envelope and picks the payload type from `type`.

#include "direct_decoder.hpp"
#include "json_io.hpp"
#include "schema.hpp"

#include <board/codec.hpp>

#include <boost/json/monotonic_resource.hpp>

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <variant>

namespace board {
namespace {

using codec_detail::fail_at;
using codec_detail::guarded;
using codec_detail::Path;
using codec_detail::Reader;
using codec_detail::Time;
namespace json = boost::json;

// ---------------------------------------------------------------------------------------------
// The payload types by wire name, built from the Payload variant itself, so a new alternative
// is decodable as soon as schema.hpp describes it (and does not compile until it does).

using PayloadReader = void (*)(const Reader&, Payload&);

template <class T>
void read_payload(const Reader& io, Payload& payload) {
    describe(io, payload.emplace<T>());
}

struct PayloadType {
    std::string_view name;
    PayloadReader read;
};

template <std::size_t... I>
constexpr auto make_payload_types(std::index_sequence<I...> /*alternatives*/) {
    return std::array{PayloadType{std::variant_alternative_t<I, Payload>::type,
                                  &read_payload<std::variant_alternative_t<I, Payload>>}...};
}

constexpr auto payload_types =
    make_payload_types(std::make_index_sequence<std::variant_size_v<Payload>>{});

Event read_event(const json::value& document) {
    const Path root;
    const Reader io{document, root, /*lenient=*/false};
    Event event;

    // The version first: a newer log must be refused as such, not as an unknown type.
    io.identity("v", event.v);
    if (event.v > event_schema_version)
        fail_at(root.member("v"),
                "schema version " + std::to_string(event.v) + " is newer than this build reads (" +
                    std::to_string(event_schema_version) + ")");
    if (event.v < 1)
        fail_at(
            root.member("v"),
            "schema version " + std::to_string(event.v) + " is not valid (versions start at 1)");

    const std::string_view type = io.text("type");
    const PayloadType* payload_type = nullptr;
    for (const auto& candidate : payload_types)
        if (candidate.name == type) payload_type = &candidate;
    if (payload_type == nullptr)
        fail_at(root.member("type"), "unknown event type " + codec_detail::quote(type));

    io.identity("seq", event.seq);
    io.identity("id", event.id);
    io.identity("at", Time{event.at});
    io.identity("by", event.by);
    payload_type->read(io, event.payload);
    return event;
}

/// The document path: the line parsed into a boost::json::value, then read_event(). Slower,
/// but it is the one that words every error. One parser and one arena, reused. Throws
/// DecodeFailure.
class DocumentDecoder {
public:
    Event decode(std::string_view line) {
        // A fresh arena over the same buffer for every line, not release(): Boost 1.81's
        // monotonic_resource keeps doubling its next block size across release(), so a log
        // with many long lines would soon ask for gigabytes.
        json::monotonic_resource arena{buffer_.data(), buffer_.size()};
        const json::value document = parser_.parse(line, &arena);
        return read_event(document);
    }

private:
    static constexpr std::size_t arena_size = 4096;  // a typical line fits: no allocation
    std::array<unsigned char, arena_size> buffer_{};
    codec_detail::JsonParser parser_;
};

/// The direct path for every line it accepts (all well-formed lines the codec writes), the
/// document path for the rest, which are the lines with something to report: the result is
/// the document path's either way (direct_decoder.hpp). Once warm, a good line allocates
/// nothing but the strings of the Event it returns. Throws DecodeFailure.
class LineDecoder {
public:
    Event decode(std::string_view line) {
        Event event;
        if (!direct_.decode(line, event)) event = document().decode(line);
        return event;
    }

private:
    DocumentDecoder& document() {
        if (!document_) document_ = std::make_unique<DocumentDecoder>();
        return *document_;
    }

    codec_detail::DirectEventDecoder direct_;
    std::unique_ptr<DocumentDecoder> document_;  ///< made on the first line that needs it
};

}  // namespace

void append_event(std::string& out, const Event& event) {
    codec_detail::Writer io{out};
    auto& json = io.json();
    json.begin_object();
    io.identity("v", event.v);
    io.identity("seq", event.seq);
    io.identity("id", event.id);
    io.identity("at", Time{event.at});
    io.identity("by", event.by);
    json.field("type", type_name(event.payload));
    std::visit([&](const auto& payload) { describe(io, payload); }, event.payload);
    json.end_object();
}

std::string encode_event(const Event& event) {
    std::string line;
    line.reserve(256);
    append_event(line, event);
    return line;
}

boost::json::object event_to_json(const Event& event) {
    codec_detail::JsonParser parser;
    return std::move(parser.parse(encode_event(event)).as_object());
}

DecodeResult<Event> decode_event(std::string_view line) {
    return guarded<Event>([&] { return LineDecoder{}.decode(line); });
}

namespace codec_detail {

DecodeResult<Event> decode_event_document(std::string_view line) {
    return guarded<Event>([&] { return DocumentDecoder{}.decode(line); });
}

}  // namespace codec_detail

DecodeResult<Event> event_from_json(const boost::json::value& document) {
    return guarded<Event>([&] { return read_event(document); });
}

struct EventDecoder::Impl : LineDecoder {};

EventDecoder::EventDecoder()
    : impl_(std::make_unique<Impl>()) {}

EventDecoder::~EventDecoder() = default;
EventDecoder::EventDecoder(EventDecoder&&) noexcept = default;
EventDecoder& EventDecoder::operator=(EventDecoder&&) noexcept = default;

DecodeResult<Event> EventDecoder::decode(std::string_view line) {
    return guarded<Event>([&] {
        if (!impl_) impl_ = std::make_unique<Impl>();  // a moved-from decoder still works
        return impl_->decode(line);
    });
}

}  // namespace board
