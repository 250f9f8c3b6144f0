defmodule Parser do
end
