"""Content negotiation as kube-apiserver does it (see README.md, "Media types").

Output (`Accept`): k8s.io/apiserver/pkg/endpoints/handlers/negotiation/negotiate.go,
`NegotiateOutputMediaType` / `NegotiateMediaTypeOptions`: an empty header means the first served
type (JSON); otherwise the header's clauses (goautoneg order: by q, then specific before `*`) are
matched in turn against the served types by `type/subtype`, `type/*` or `*/*`, a clause whose
parameters the endpoint does not allow (`stream=` on a type without a stream serializer, `as=`
conversions) is skipped, and when no clause matches the answer is 406 NotAcceptable:
"only the following media types are accepted: application/json, application/yaml,
application/vnd.kubernetes.protobuf" (errors.go, `NewNotAcceptableError`). There is no fallback
to JSON: `Accept: text/plain` alone is refused on every resource endpoint, pods/log included
(handlers/get.go negotiates before calling the log getter).

Watches negotiate again for a stream serializer (`NegotiateOutputMediaTypeStream`): YAML has none,
so the 406 lists the stream types.

Input (`Content-Type`): `NegotiateInputSerializerForMediaType`: empty means JSON; anything but a
served type is 415 UnsupportedMediaType ("the body of the request was in an unknown format -
accepted media types include: ..."). Patches check their own list (handlers/patch.go).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import ApiError, unsupported_media_type

JSON_TYPE = "application/json"
YAML_TYPE = "application/yaml"
PROTOBUF_TYPE = "application/vnd.kubernetes.protobuf"
# runtime.NegotiatedSerializer.SupportedMediaTypes() of the core group (legacyscheme codecs) and
# of custom resources (apiextensions-apiserver customresource_handler.go) alike, without the
# CBORServingAndStorage feature gate; JSON and protobuf have stream serializers, YAML has none.
SERVED = (JSON_TYPE, YAML_TYPE, PROTOBUF_TYPE)
STREAMING = (JSON_TYPE, PROTOBUF_TYPE)


@dataclass
class Clause:
    type: str
    subtype: str
    q: float = 1.0
    params: dict[str, str] = field(default_factory=dict)


def parse_accept(header: str) -> list[Clause]:
    """goautoneg.ParseAccept: clauses sorted by q (highest first), then specific before `*`."""
    clauses: list[Clause] = []
    for part in header.split(","):
        mrp = [p.strip() for p in part.split(";")]
        media = mrp[0]
        if not media:
            continue
        kind, _, sub = media.partition("/")
        if not sub:
            if kind != "*":
                continue  # goautoneg skips a type without a subtype, except "*"
            sub = "*"
        clause = Clause(kind.lower(), sub.lower())
        for param in mrp[1:]:
            key, _, value = param.partition("=")
            key, value = key.strip(), value.strip()
            if key == "q":
                try:
                    clause.q = float(value)
                except ValueError:
                    clause.q = 0.0
            elif key:
                clause.params[key] = value
        clauses.append(clause)
    clauses.sort(key=lambda c: (-c.q, c.type == "*", c.subtype == "*"))
    return clauses


def not_acceptable(accepted: tuple[str, ...]) -> ApiError:
    return ApiError(406, "only the following media types are accepted: " + ", ".join(accepted), "NotAcceptable")


def _allowed(params: dict[str, str], media: str) -> bool:
    """acceptMediaTypeOptions with the default endpoint restrictions: no conversions (as/g/v),
    no server versions (sv), `stream=watch` only on a type with a stream serializer."""
    if any(params.get(key) for key in ("as", "g", "v")):
        return False  # the double serves no Table / PartialObjectMetadata conversions
    if params.get("sv"):
        return False
    stream = params.get("stream")
    return not stream or (media in STREAMING and stream == "watch")


def negotiate_output(accept: str | None) -> str:
    """The media type to answer in, or ApiError 406 as the real server answers."""
    if not accept:
        return SERVED[0]
    for clause in parse_accept(accept):
        for media in SERVED:
            kind, sub = media.split("/")
            if (clause.type, clause.subtype) in ((kind, sub), (kind, "*"), ("*", "*")) and _allowed(
                clause.params, media
            ):
                return media
    raise not_acceptable(SERVED)


def negotiate_stream(accept: str | None) -> str:
    """A watch's media type: the negotiated one must have a stream serializer."""
    try:
        media = negotiate_output(accept)
    except ApiError:
        media = ""
    if media not in STREAMING:
        raise not_acceptable(tuple(m + ";stream=watch" for m in STREAMING))
    return media


def negotiate_input(content_type: str | None) -> str:
    """The body's media type for create, update and a delete with DeleteOptions; 415 otherwise."""
    media = (content_type or "").split(";")[0].strip().lower() or SERVED[0]
    if media not in SERVED:
        raise unsupported_media_type(list(SERVED))
    return media
