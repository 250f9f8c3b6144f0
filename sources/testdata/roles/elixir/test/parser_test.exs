defmodule ParserTest do
end
