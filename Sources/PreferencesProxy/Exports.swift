// The proxy's calls, answers and errors are made of the protocol's types (refusals, history
// entries, names): whoever calls prefsd through the proxy has them too, the refusals' names
// in patterns included (`catch .refused(.notFound)`).
@_exported import PreferencesProtocol
