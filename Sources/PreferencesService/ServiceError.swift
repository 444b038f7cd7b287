import PreferencesProtocol

/// Why the service refused a call, with the D-Bus error it is answered with
/// (``PreferencesRefusal/busErrorName``): the refusals both ends of the bus share.
public typealias PreferencesServiceError = PreferencesRefusal
