# lp_embed(OUT_C SYMBOL FILE...): turns text files into one C string so the
# binary carries its SQL schema and HTML assets without reading files at run
# time.
function(lp_embed out_c symbol)
  add_custom_command(OUTPUT ${out_c}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out_c} -DSYMBOL=${symbol} "-DINPUTS=${ARGN}"
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_run.cmake
    DEPENDS ${ARGN} ${PROJECT_SOURCE_DIR}/cmake/embed_run.cmake
    COMMENT "Embedding ${symbol}")
endfunction()
