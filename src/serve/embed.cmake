# SPDX-License-Identifier: Apache-2.0
# embed.cmake - turns the live page's stylesheet and script (page.css;
# page.js then gpuview.js, one script so the CSP names one hash) into a C
# header of two NUL-terminated arrays, so the page is compiled into vramz:
# nothing to install, nothing fetched at run time.
# Run at build time:
#   cmake -DOUT=page_assets.h -DCSS=page.css -DJS=page.js -DJS2=gpuview.js -P embed.cmake
function(embed_one var paths out)
  set(hex "")
  foreach(path IN LISTS paths)
    file(READ "${path}" part HEX)
    string(APPEND hex "${part}")
  endforeach()
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" hex "${hex}")
  file(APPEND "${out}" "static const char ${var}[] = {\n${hex}0x00};\n")
endfunction()
file(WRITE "${OUT}.tmp" "/* generated from src/serve/page.css, page.js and gpuview.js by src/serve/embed.cmake */\n")
embed_one(page_css "${CSS}" "${OUT}.tmp")
embed_one(page_js "${JS};${JS2}" "${OUT}.tmp")
file(RENAME "${OUT}.tmp" "${OUT}")
