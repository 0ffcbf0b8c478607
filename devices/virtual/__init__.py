"""The simulated Android phone behind the virtual ADB server."""
