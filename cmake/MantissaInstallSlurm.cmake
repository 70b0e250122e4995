# Run by `cmake --install` (cmake/MantissaInstall.cmake) for one Slurm batch script: installs it
# with the default executable set to the installed one. In: _mantissa_script (source file),
# _mantissa_bindir, _mantissa_dest (relative to the install prefix).
get_filename_component(_name "${_mantissa_script}" NAME)
set(_dir "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${_mantissa_dest}")
file(READ "${_mantissa_script}" _text)
set(_from [=[MANTISSA="${MANTISSA:-mantissa}"]=])
set(_to "MANTISSA=\"\${MANTISSA:-${CMAKE_INSTALL_PREFIX}/${_mantissa_bindir}/mantissa}\"")
string(FIND "${_text}" "${_from}" _at)
if(_at LESS 0 AND _name MATCHES "\\.sbatch$")
  message(FATAL_ERROR "${_mantissa_script}: no line ${_from} to point at the installed executable")
endif()
string(REPLACE "${_from}" "${_to}" _text "${_text}")
file(MAKE_DIRECTORY "${_dir}")
message(STATUS "Installing: ${_dir}/${_name}")
file(WRITE "${_dir}/${_name}" "${_text}")
file(CHMOD "${_dir}/${_name}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
           GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
