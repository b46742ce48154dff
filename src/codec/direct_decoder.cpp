// The fast path of event decoding (see direct_decoder.hpp): Boost.JSON's basic_parser calls a
// handler that writes each value straight into its field of the Event. Where each key goes is
// looked up in tables (direct_decoder_tables.hpp) built once from the same describe()
// functions (schema.hpp) that drive encoding and the document path, so a field added there is
// decoded here too. This file holds the handler and its parse loop.

#include "direct_decoder.hpp"

#include "direct_decoder_tables.hpp"
#include "json_io.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/error.hpp>
#include <boost/json/parse_options.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace board::codec_detail {
namespace {

using direct::FieldSpec;
using direct::PayloadSpec;
using direct::PayloadSpecs;
using direct::same_key;
using direct::StructTable;
using direct::type_key;
using direct::ValueOps;

/// The basic_parser handler. It keeps a stack of the objects and arrays it is inside and, after
/// each key, which field the coming value fills. Any callback returning false stops the parse:
/// the line then goes to the document path.
class DirectHandler {
public:
    static constexpr std::size_t max_object_size = json::object::max_size();
    static constexpr std::size_t max_array_size = json::array::max_size();
    static constexpr std::size_t max_key_size = json::string::max_size();
    static constexpr std::size_t max_string_size = json::string::max_size();

    DirectHandler()
        : envelope_(direct::envelope_table())
        , payloads_(direct::payload_specs()) {
        frames_.reserve(8);
    }

    void start(Event& out) {
        event_ = &out;
        frames_.clear();
        skip_depth_ = 0;
        pending_ = nullptr;
        pending_field_ = nullptr;
        expecting_type_ = false;
        type_seen_ = false;
        payload_table_ = nullptr;
        payload_ = nullptr;
        payload_seen_ = 0;
        payload_hint_ = 0;
        complete_ = false;
        text_.clear();
        key_.clear();
        number_.clear();
    }

    /// The root object ended with everything the document path requires.
    bool complete() const { return complete_; }

    bool on_document_begin(json::error_code&) { return true; }

    bool on_document_end(json::error_code&) { return true; }

    bool on_object_begin(json::error_code& ec) {
        if (skip_depth_ > 0) {
            ++skip_depth_;
            return true;
        }
        if (frames_.empty()) {
            frames_.push_back(Frame{&envelope_, event_, nullptr, 0, 0});
            return true;
        }
        void* target = nullptr;
        const ValueOps* ops = nullptr;
        switch (slot(target, ops)) {
            case Slot::ignored:
                skip_depth_ = 1;
                return true;
            case Slot::field:
                if (ops->object == nullptr) return give_up(ec);
                frames_.push_back(Frame{ops->object, target, nullptr, 0, 0});
                return true;
            case Slot::type:
            case Slot::refused:
                break;
        }
        return give_up(ec);
    }

    bool on_object_end(std::size_t, json::error_code& ec) {
        if (skip_depth_ > 0) {
            --skip_depth_;
            return true;
        }
        const Frame& top = frames_.back();
        if ((top.seen & top.table->required_mask) != top.table->required_mask) return give_up(ec);
        if (frames_.size() == 1) {
            if (payload_table_ == nullptr ||
                (payload_seen_ & payload_table_->required_mask) != payload_table_->required_mask)
                return give_up(ec);
            if (event_->v < 1 || event_->v > event_schema_version) return give_up(ec);
            complete_ = true;
        }
        frames_.pop_back();
        return true;
    }

    bool on_array_begin(json::error_code& ec) {
        if (skip_depth_ > 0) {
            ++skip_depth_;
            return true;
        }
        if (frames_.empty()) return give_up(ec);
        void* target = nullptr;
        const ValueOps* ops = nullptr;
        switch (slot(target, ops)) {
            case Slot::ignored:
                skip_depth_ = 1;
                return true;
            case Slot::field:
                if (ops->element == nullptr) return give_up(ec);
                ops->clear(target);
                frames_.push_back(Frame{nullptr, target, ops, 0, 0});
                return true;
            case Slot::type:
            case Slot::refused:
                break;
        }
        return give_up(ec);
    }

    bool on_array_end(std::size_t, json::error_code&) {
        if (skip_depth_ > 0) {
            --skip_depth_;
            return true;
        }
        frames_.pop_back();
        return true;
    }

    bool on_key_part(json::string_view part, std::size_t, json::error_code&) {
        if (skip_depth_ == 0) key_.append(part.data(), part.size());
        return true;
    }

    bool on_key(json::string_view tail, std::size_t, json::error_code& ec) {
        if (skip_depth_ > 0) return true;
        std::string_view key{tail.data(), tail.size()};
        if (!key_.empty()) key = key_.append(tail.data(), tail.size());
        const bool bound = bind(key);
        key_.clear();
        return bound || give_up(ec);
    }

    bool on_string_part(json::string_view part, std::size_t, json::error_code&) {
        if (skip_depth_ == 0) text_.append(part.data(), part.size());
        return true;
    }

    bool on_string(json::string_view tail, std::size_t, json::error_code& ec) {
        if (skip_depth_ > 0) return true;
        std::string_view text{tail.data(), tail.size()};
        if (!text_.empty()) text = text_.append(tail.data(), tail.size());
        const bool taken = take_string(text);
        text_.clear();
        return taken || give_up(ec);
    }

    bool on_number_part(json::string_view part, json::error_code&) {
        number_.append(part.data(), part.size());
        return true;
    }

    bool on_int64(std::int64_t number, json::string_view, json::error_code& ec) {
        number_.clear();
        if (skip_depth_ > 0) return true;
        void* target = nullptr;
        const ValueOps* ops = nullptr;
        switch (slot(target, ops)) {
            case Slot::ignored:
                return true;
            case Slot::field:
                if (ops->integer != nullptr && ops->integer(target, number)) return true;
                if (ops->number != nullptr && ops->number(target, static_cast<double>(number)))
                    return true;
                break;
            case Slot::type:
            case Slot::refused:
                break;
        }
        return give_up(ec);
    }

    bool on_uint64(std::uint64_t number, json::string_view, json::error_code& ec) {
        number_.clear();
        if (skip_depth_ > 0) return true;
        // Boost only uses uint64 above INT64_MAX: too big for every integer field.
        return take_number(static_cast<double>(number)) || give_up(ec);
    }

    bool on_double(double parsed, json::string_view tail, json::error_code& ec) {
        std::string_view text{tail.data(), tail.size()};
        if (!number_.empty()) text = number_.append(tail.data(), tail.size());
        const double exact = exact_double(parsed, text);
        number_.clear();
        if (skip_depth_ > 0) return true;
        return take_number(exact) || give_up(ec);
    }

    bool on_bool(bool flag, json::error_code& ec) {
        if (skip_depth_ > 0) return true;
        void* target = nullptr;
        const ValueOps* ops = nullptr;
        switch (slot(target, ops)) {
            case Slot::ignored:
                return true;
            case Slot::field:
                if (ops->boolean != nullptr && ops->boolean(target, flag)) return true;
                break;
            case Slot::type:
            case Slot::refused:
                break;
        }
        return give_up(ec);
    }

    bool on_null(json::error_code& ec) {
        if (skip_depth_ > 0) return true;
        void* target = nullptr;
        const ValueOps* ops = nullptr;
        // `null` is never a field's value; under an unknown key it is ignored like any value.
        if (slot(target, ops) == Slot::ignored) return true;
        return give_up(ec);
    }

    bool on_comment_part(json::string_view, json::error_code&) { return true; }

    bool on_comment(json::string_view, json::error_code&) { return true; }

private:
    struct Frame {
        const StructTable* table;  ///< null: an array
        void* target;              ///< the struct, or the vector
        const ValueOps* array;     ///< an array's ops (element, append)
        std::uint64_t seen;        ///< the table's fields met so far
        std::size_t hint;          ///< where StructTable::find looks first
    };

    enum class Slot : std::uint8_t {
        field,    ///< `target` with `ops`
        ignored,  ///< the value of an unknown key
        type,     ///< the value of the envelope's `type`
        refused,  ///< a value where none can be: the document itself is not an object
    };

    static bool give_up(json::error_code& ec) {
        ec = json::error::exception;
        return false;
    }

    /// Where the coming value goes.
    Slot slot(void*& target, const ValueOps*& ops) {
        if (frames_.empty()) return Slot::refused;
        Frame& top = frames_.back();
        if (top.table == nullptr) {
            ops = top.array->element;
            target = ops->resolve(top.array->append(top.target));
            return Slot::field;
        }
        if (expecting_type_) {
            expecting_type_ = false;
            return Slot::type;
        }
        if (pending_ == nullptr) return Slot::ignored;
        ops = pending_;
        target = ops->resolve(pending_field_);
        pending_ = nullptr;
        return Slot::field;
    }

    enum class Bound : std::uint8_t { found, unknown, duplicate };

    Bound bind_in(const StructTable& table,
                  void* object,
                  std::uint64_t& seen,
                  std::size_t& hint,
                  std::string_view key) {
        const int index = table.find(key, hint);
        if (index < 0) return Bound::unknown;
        const std::uint64_t bit = std::uint64_t{1} << index;
        if ((seen & bit) != 0) return Bound::duplicate;  // which one wins is the document's call
        seen |= bit;
        const FieldSpec& field = table.fields[static_cast<std::size_t>(index)];
        pending_ = field.ops;
        pending_field_ = static_cast<char*>(object) + field.offset;
        return Bound::found;
    }

    /// Points `pending_` at the field named `key` (null: an unknown key, its value ignored).
    /// False to give up.
    bool bind(std::string_view key) {
        pending_ = nullptr;
        Frame& top = frames_.back();
        if (frames_.size() > 1)
            return bind_in(*top.table, top.target, top.seen, top.hint, key) != Bound::duplicate;
        // The root: payload fields (once `type` has named the payload) and the envelope.
        if (payload_table_ != nullptr) {
            const Bound bound =
                bind_in(*payload_table_, payload_, payload_seen_, payload_hint_, key);
            if (bound != Bound::unknown) return bound == Bound::found;
        }
        if (same_key(key, type_key)) {
            if (type_seen_) return false;
            type_seen_ = true;
            expecting_type_ = true;
            return true;
        }
        const Bound bound = bind_in(*top.table, top.target, top.seen, top.hint, key);
        if (bound != Bound::unknown) return bound == Bound::found;
        // Unknown to the envelope: before `type` it may be a payload field not yet known as
        // one, so leave such a line to the document path (the codec writes `type` first).
        return payload_table_ != nullptr;
    }

    bool take_string(std::string_view text) {
        void* target = nullptr;
        const ValueOps* ops = nullptr;
        switch (slot(target, ops)) {
            case Slot::ignored:
                return true;
            case Slot::field:
                return ops->string != nullptr && ops->string(target, text);
            case Slot::type:
                for (const PayloadSpec& spec : payloads_) {
                    if (same_key(spec.name, text)) {
                        payload_ = spec.emplace(event_->payload);
                        payload_table_ = spec.table;
                        return true;
                    }
                }
                return false;
            case Slot::refused:
                break;
        }
        return false;
    }

    bool take_number(double number) {
        void* target = nullptr;
        const ValueOps* ops = nullptr;
        switch (slot(target, ops)) {
            case Slot::ignored:
                return true;
            case Slot::field:
                return ops->number != nullptr && ops->number(target, number);
            case Slot::type:
            case Slot::refused:
                break;
        }
        return false;
    }

    const StructTable& envelope_;
    const PayloadSpecs& payloads_;
    Event* event_ = nullptr;
    std::vector<Frame> frames_;
    std::size_t skip_depth_ = 0;  ///< > 0: inside the value of an unknown key
    const ValueOps* pending_ = nullptr;
    void* pending_field_ = nullptr;
    bool expecting_type_ = false;
    bool type_seen_ = false;
    const StructTable* payload_table_ = nullptr;
    void* payload_ = nullptr;
    std::uint64_t payload_seen_ = 0;
    std::size_t payload_hint_ = 0;
    bool complete_ = false;
    std::string text_;    ///< a string's pieces, when the parser hands it over in several
    std::string key_;     ///< a key's pieces
    std::string number_;  ///< a number's pieces
};

}  // namespace

struct DirectEventDecoder::Impl {
    json::basic_parser<DirectHandler> parser{json::parse_options{}};
};

DirectEventDecoder::DirectEventDecoder()
    : impl_(std::make_unique<Impl>()) {}

DirectEventDecoder::~DirectEventDecoder() = default;

bool DirectEventDecoder::decode(std::string_view line, Event& out) {
    auto& parser = impl_->parser;
    parser.reset();
    parser.handler().start(out);
    json::error_code ec;
    const std::size_t consumed = parser.write_some(false, line.data(), line.size(), ec);
    return !ec && consumed == line.size() && parser.handler().complete();
}

}  // namespace board::codec_detail
