"""Installing: the native host, the service, client apps, doctor, the package."""
