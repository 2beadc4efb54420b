"""The consult agent: LangGraph state machine, LLM factory, sessions and front ends."""
