public import Alerting
import Foundation
public import OrderedJSON
public import Storage
import ValueFormats

/// The JSON forms of alerts, shared by `hostscope alerts` and `serve`'s `/api/v1/alerts`: the shape of
/// Prometheus's own `/api/v1/alerts` (labels, annotations, state, activeAt, value as text) plus `firedAt`.
public enum AlertJSON {
    /// One pending or firing alert.
    public static func alert(_ alert: StoredAlert) -> JSONValue {
        .object([
            "labels": strings(alert.labels),
            "annotations": strings(alert.annotations),
            "state": .string(alert.state),
            "activeAt": .string(RFC3339.format(alert.activeAt)),
            "firedAt": alert.firedAt.map { .string(RFC3339.format($0)) } ?? .null,
            "value": .string(AlertValueText.plain(alert.value)),
        ])
    }

    /// A live alert of the evaluator, in the same form.
    public static func alert(_ alert: ActiveAlert) -> JSONValue { Self.alert(StoredAlert(alert: alert)) }

    /// One transition.
    public static func transition(_ transition: StoredAlertTransition) -> JSONValue {
        .object([
            "at": .string(RFC3339.format(transition.at)),
            "from": .string(transition.from),
            "to": .string(transition.to),
            "labels": strings(transition.labels),
            "annotations": strings(transition.annotations),
            "value": .string(AlertValueText.plain(transition.value)),
        ])
    }

    /// A transition as a record of `watch`'s JSON and NDJSON output, beside the snapshots: the same `schema`,
    /// `host` and `collected_at` keys as theirs (`hostscope.alert/1`, the transition's time) and the transition
    /// under `alert`.
    public static func record(_ transition: AlertTransition) -> JSONValue {
        .object([
            "schema": "hostscope.alert/1", "host": .string(transition.alert.host),
            "collected_at": .string(RFC3339.format(transition.at)), "alert": Self.transition(transition),
        ])
    }

    /// A live transition, in the same form.
    public static func transition(_ transition: AlertTransition) -> JSONValue {
        Self.transition(StoredAlertTransition(transition: transition))
    }

    private static func strings(_ map: [String: String]) -> JSONValue {
        .object(JSONObject(map.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))
    }
}
