# SPDX-License-Identifier: Apache-2.0
# embed.cmake - turns the live page's stylesheet and script (page.css,
# page.js) into a C header of two NUL-terminated arrays, so the page is
# compiled into vramz: nothing to install, nothing fetched at run time.
# Run at build time: cmake -DOUT=page_assets.h -DCSS=page.css -DJS=page.js -P embed.cmake
function(embed_one var path out)
  file(READ "${path}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" hex "${hex}")
  file(APPEND "${out}" "static const char ${var}[] = {\n${hex}0x00};\n")
endfunction()
file(WRITE "${OUT}.tmp" "/* generated from src/serve/page.css and page.js by src/serve/embed.cmake */\n")
embed_one(page_css "${CSS}" "${OUT}.tmp")
embed_one(page_js "${JS}" "${OUT}.tmp")
file(RENAME "${OUT}.tmp" "${OUT}")
