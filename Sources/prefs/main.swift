import PrefsCommand

#if canImport(Glibc)
    import Glibc
#endif

exit(await Prefs.execute(arguments: Array(CommandLine.arguments.dropFirst())))
