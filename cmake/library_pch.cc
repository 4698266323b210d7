// The owner of the precompiled header every library reuses (cmake/EmberLibraryPch.cmake): compiled
// so that the header is built once with the libraries' flags; it defines nothing.
