// prefsd's names on the bus and the meaning of its error answers are part of what both
// ends share: whoever speaks the protocol through this module has them too.
@_exported import PreferencesInterface
